/**
 * The Kubernetes controller builder — controller-runtime's For / Owns /
 * Watches / WithEventFilter / WithOptions — over the shared {@link Cache}.
 *
 * - `for`: the primary resource; its events enqueue the object itself.
 * - `owns`: resources whose changes enqueue their **controller** owner of the
 *   `for` kind (controller owner references, as `Owns` does by default).
 * - `watches`: any resource with a map function from an object to requests
 *   (e.g. through a cache index).
 * - `eventFilter`: a predicate applied to the events of every source.
 * - Priorities (with `options: { queue: Workqueue.priority }`): `forPriority`, an
 *   `owns` entry made with {@link owns}, and a `watches` entry's `priority`
 *   give the priority of the requests their events cause — a number, or a
 *   `Handler.Priority` rule per event (`undefined`: the default, where
 *   initial-list objects and resyncs enter at `Handler.LowPriority`). A FIFO
 *   queue ignores them.
 * - Reconcile **by object** (kube-rs style): `reconcile(object)` gets the
 *   current cached object; keys whose object no longer exists are skipped.
 *   An object that exists but **does not decode** (see `Undecodable`) is
 *   handed over too, as an `Undecodable` (its latest metadata and the decode
 *   failure), so it can be reported and its deletion and finalizers processed:
 *   either `reconcile` accepts `A | Undecodable` (what `Finalizer.reconcile`
 *   returns), or `onUndecodable` handles it and `reconcile` gets `A` only.
 *   The compiler asks for one or the other; `Undecodable.terminal` is the
 *   handler for controllers with nothing to do for such objects.
 *   Or **by key** (controller-runtime style): `reconcileRequest(request)`
 *   reads the cache itself (`Cache.get` fails with the `Decode` error).
 * - Objects of `for` and `owns` that stop decoding enqueue their key (or
 *   their controller owner) as any change does.
 *
 * Sources are the cache's Kind sources: workers start once every informer has
 * synced.
 *
 * **A controller is a value.** {@link make} returns a {@link KubeController}:
 * the definition (what it runs) and its {@link Declaration} (what it reads and
 * writes: `for`, `owns`, `watches`, `rbac`), which `Operator` and `Manifests`
 * read to compute RBAC. {@link layer} gives the Layer that runs it under the
 * `Manager` (required in its type, as the `Cache` is): an ordinary Layer, for
 * `Layer.provide`, `Layer.merge` and every other Layer function — what a Layer
 * is built into never changes what the value declares. {@link start} runs it
 * in the current scope and returns its handle.
 *
 * @example
 * ```ts
 * import type { Effect } from "effect"
 * import type { ObjectMeta, Reconcile } from "@reconcile/core"
 * import { Finalizer, type KubeClient, KubeController, Resource, Undecodable } from "@reconcile/kube"
 *
 * // WebApp: a custom resource (Resource.custom)
 * declare const WebApp: Resource.Resource<Resource.CustomObject<{ readonly image: string }>>
 * type WebApp = Resource.Type<typeof WebApp>
 * declare const reconcileWebApp: (app: WebApp) => Effect.Effect<void, Reconcile.Outcome, KubeClient.KubeClient>
 * declare const apply: (app: WebApp) => Effect.Effect<void, Reconcile.Outcome, KubeClient.KubeClient>
 * declare const cleanup: (app: { readonly metadata: ObjectMeta.ObjectMeta }) => Effect.Effect<void, Reconcile.Outcome>
 *
 * // a value: what the controller runs and what it declares (Operator and Manifests read it)
 * const WebAppController = KubeController.make({
 *   name: "webapp",
 *   for: WebApp,
 *   owns: [Resource.Deployment, Resource.Service],
 *   reconcile: (app) => reconcileWebApp(app), // (app: WebApp) => Effect<void, Outcome, R>
 *   onUndecodable: Undecodable.terminal, // a WebApp that no longer decodes
 *   options: { maxConcurrentReconciles: 4 }
 * })
 *
 * // its Layer, under the Manager: it composes with every Layer function
 * const Running = KubeController.layer(WebAppController) // Layer<never, never, Cache | Manager | KubeClient>
 *
 * // with a finalizer: `Finalizer.reconcile` takes `WebApp | Undecodable`, no `onUndecodable` needed
 * const WithCleanup = KubeController.make({
 *   name: "webapp",
 *   for: WebApp,
 *   reconcile: Finalizer.reconcile({ resource: WebApp, name: "example.com/cleanup", apply, cleanup })
 * })
 * ```
 *
 * @since 0.1.0
 */
import type * as Controller from "@reconcile/core/Controller"
import type * as Handler from "@reconcile/core/Handler"
import type { Manager } from "@reconcile/core/Manager"
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import type { Predicate } from "@reconcile/core/Predicates"
import type * as Reconcile from "@reconcile/core/Reconcile"
import type * as Request from "@reconcile/core/Request"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type { Pipeable } from "effect/Pipeable"
import type * as Scope from "effect/Scope"
import type * as Cache from "./Cache.js"
import * as internal from "./internal/kubeController.js"
import type { PolicyRule } from "./internal/policyRule.js"
import type * as Resource from "./Resource.js"
import type * as Undecodable from "./Undecodable.js"

/**
 * A watched resource with a map function (controller-runtime's `Watches` with
 * `EnqueueRequestsFromMapFunc`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Watches<B extends HasMetadata, E = never, R = never> {
  readonly resource: Resource.Resource<B>
  readonly selection?: Cache.Selection | undefined
  /** Maps an object (old and new on updates) to the requests it should enqueue. */
  readonly map: (object: B) => Effect.Effect<Iterable<Request.Request>, E, R>
  readonly predicates?: ReadonlyArray<Predicate<B>> | undefined
  /**
   * The priority of the requests this resource's events cause in a priority queue: a number, or a rule per event
   * (`undefined` from the rule: the default). Absent: the default (initial list and resyncs at `LowPriority`).
   */
  readonly priority?: number | Handler.Priority<B> | undefined
}

/**
 * Builds a {@link Watches} entry (keeps the object type of `resource` and `map` in step).
 *
 * @since 0.1.0
 * @category constructors
 */
export const watches = <B extends HasMetadata, E = never, R = never>(w: Watches<B, E, R>): Watches<any, E, R> => w

/**
 * An owned resource with options (controller-runtime's `Owns(obj, opts…)`); a plain `Resource` in `owns` is one
 * with none.
 *
 * @since 0.1.0
 * @category models
 */
export interface Owns<B extends HasMetadata> {
  readonly resource: Resource.Resource<B>
  /**
   * The priority at which an owned object's events enqueue its owner in a priority queue: a number, or a rule per
   * event (`undefined` from the rule: the default). Objects that stop decoding use a number, not a rule.
   */
  readonly priority?: number | Handler.Priority<B> | undefined
}

/**
 * Builds an {@link Owns} entry: an owned resource with a priority (keeps the object type of `resource` and the
 * rule in step).
 *
 * @example
 * ```ts
 * import { KubeController, Resource } from "@reconcile/kube"
 *
 * // changes to owned Deployments go before other work in a priority queue
 * const owned = KubeController.owns(Resource.Deployment, { priority: 10 })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const owns = <B extends HasMetadata>(
  resource: Resource.Resource<B>,
  options?: { readonly priority?: number | Handler.Priority<B> | undefined }
): Owns<any> => ({ resource, priority: options?.priority })

interface Common<A extends HasMetadata, E, RW> {
  /** The controller name (metrics, logs, queue, field manager). */
  readonly name: string
  /** The primary resource. */
  readonly for: Resource.Resource<A>
  /** Which objects of `for` to watch (namespace, selectors). */
  readonly selection?: Cache.Selection | undefined
  /** Predicates for the primary resource's events only. */
  readonly forPredicates?: ReadonlyArray<Predicate<A>> | undefined
  /**
   * The priority of the primary resource's requests in a priority queue: a number, or a rule per event
   * (`undefined` from the rule: the default). Objects that stop decoding use a number, not a rule.
   */
  readonly forPriority?: number | Handler.Priority<A> | undefined
  /**
   * Resources controlled by `for` objects (through controller owner references): a `Resource`, or an entry with
   * options made with {@link owns}.
   */
  readonly owns?: ReadonlyArray<Resource.Resource<any> | Owns<any>> | undefined
  /** Other resources, mapped to requests. */
  readonly watches?: ReadonlyArray<Watches<any, E, RW>> | undefined
  /** A predicate for the events of every source (controller-runtime's `WithEventFilter`). */
  readonly eventFilter?: Predicate<HasMetadata> | undefined
  readonly options?: Controller.Options | undefined
  /**
   * What the reconcile reads or writes beyond `for`, `owns` and `watches` (kubebuilder's `+kubebuilder:rbac`
   * markers): a {@link Permission} on a resource, or a raw `PolicyRule`. `Manifests` grants them in the ClusterRole.
   */
  readonly rbac?: ReadonlyArray<Permission | PolicyRule> | undefined
}

/**
 * A request verb as Kubernetes authorizes it.
 *
 * @since 0.1.0
 * @category models
 */
export type Verb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete" | "deletecollection"

/**
 * A permission the reconcile needs on a resource (or one of its subresources).
 *
 * @example
 * ```ts
 * import { KubeController, Resource } from "@reconcile/kube"
 *
 * // the reconcile creates and patches a ConfigMap it does not own
 * const registry: KubeController.Permission = { resource: Resource.ConfigMap, verbs: ["create", "patch"] }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Permission {
  readonly resource: Resource.Resource<any>
  /** `status`, `scale`, `finalizers`, … (absent: the resource itself). */
  readonly subresource?: string | undefined
  readonly verbs: ReadonlyArray<Verb>
  /** Restricts the permission to objects of these names. */
  readonly resourceNames?: ReadonlyArray<string> | undefined
}

/**
 * What a controller reads and writes: `Manifests` computes the operator's RBAC from it. Every {@link KubeController}
 * is one; a controller made otherwise (e.g. with core's `Controller.layer` over Kubernetes objects) is declared to an
 * `Operator` with a plain `Declaration`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Declaration {
  readonly name: string
  readonly for: Resource.Resource<any>
  readonly owns: ReadonlyArray<Resource.Resource<any>>
  readonly watches: ReadonlyArray<Resource.Resource<any>>
  /** The namespace the controller's cache is restricted to (`selection.namespace` of `for`), if any. */
  readonly namespace: string | undefined
  readonly rbac: ReadonlyArray<Permission | PolicyRule>
}

/**
 * A controller that reconciles the current cached object of each key: the
 * decoded object, or the `Undecodable` of an object that exists but does not
 * decode.
 *
 * @since 0.1.0
 * @category models
 */
export interface ByObject<A extends HasMetadata, E, R, RW> extends Common<A, E, RW> {
  readonly reconcile: (object: A | Undecodable.Undecodable) => Effect.Effect<void, Reconcile.Outcome, R>
  readonly onUndecodable?: undefined
}

/**
 * A controller that reconciles the current cached object of each key when it
 * decodes, and hands objects that do not decode to `onUndecodable` (e.g.
 * `Undecodable.terminal`, or a handler that sets a condition).
 *
 * @since 0.1.0
 * @category models
 */
export interface ByDecodedObject<A extends HasMetadata, E, R, RW> extends Common<A, E, RW> {
  readonly reconcile: (object: A) => Effect.Effect<void, Reconcile.Outcome, R>
  readonly onUndecodable: (object: Undecodable.Undecodable) => Effect.Effect<void, Reconcile.Outcome, R>
}

/**
 * A controller that reconciles keys and reads state itself.
 *
 * @since 0.1.0
 * @category models
 */
export interface ByRequest<A extends HasMetadata, E, R, RW> extends Common<A, E, RW> {
  readonly reconcileRequest: (request: Request.Request) => Effect.Effect<void, Reconcile.Outcome, R>
}

/**
 * A KubeController's definition.
 *
 * @since 0.1.0
 * @category models
 */
export type Config<A extends HasMetadata, E, R, RW> =
  | ByObject<A, E, R, RW>
  | ByDecodedObject<A, E, R, RW>
  | ByRequest<A, E, R, RW>

/**
 * A handler for objects that exist but do not decode (`onUndecodable`).
 *
 * @since 0.1.0
 * @category models
 */
export type OnUndecodable = (object: Undecodable.Undecodable) => Effect.Effect<void, Reconcile.Outcome, any>

/**
 * A {@link Config} as the last signature of `make` and `layer` reads it, for a config that matched none of the
 * others: `F` is the reconcile's effect, checked by `Reconcile.Checked` (so a reconcile that fails with an error
 * that is not an outcome is reported at the reconcile, naming that error and the fix); `H` is the type of
 * `onUndecodable` (`undefined` when absent).
 *
 * @since 0.1.0
 * @category models
 */
export type Definition<
  A extends HasMetadata,
  E,
  RW,
  F extends Effect.Effect<unknown, unknown, unknown>,
  H extends OnUndecodable | undefined
> =
  | Common<A, E, RW> & {
    readonly reconcileRequest: (request: Request.Request) => Reconcile.Checked<F>
  }
  | Common<A, E, RW> & {
    readonly reconcile: (object: [H] extends [undefined] ? A | Undecodable.Undecodable : A) => Reconcile.Checked<F>
    readonly onUndecodable?: H
  }

/**
 * The requirements of a controller defined by a {@link Definition}: its reconcile's, its `onUndecodable`'s and its
 * `watches`' map functions'.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements<RW, F, H> =
  | RW
  | Effect.Services<F>
  | (H extends (object: any) => Effect.Effect<any, any, infer RH> ? RH : never)

const TypeId = internal.TypeId

/**
 * A controller as a value: its definition (what it runs, given to {@link make}) and what it declares (a
 * {@link Declaration}, normalized: the resources of `owns` and `watches`). `E` is the error of its `watches` map
 * functions, `R` the services its reconcile, `onUndecodable` and map functions require.
 *
 * @since 0.1.0
 * @category models
 */
export interface KubeController<out E = never, out R = never> extends Declaration, Pipeable {
  readonly [TypeId]: {
    readonly _E: (_: never) => E
    readonly _R: (_: never) => R
  }
  /** The definition, as given to {@link make}. */
  readonly config: Config<any, any, any, any>
}

/**
 * The services the Layer of a controller requires: the `Cache`, the `Manager` and its definition's.
 *
 * @since 0.1.0
 * @category models
 */
export type Services<C> = C extends KubeController<infer _E, infer R> ? Cache.Cache | Manager | Exclude<R, Scope.Scope>
  : never

/**
 * Defines a controller (see the module documentation): a {@link KubeController} value; nothing runs until its
 * {@link layer} is built or it is {@link start}ed.
 *
 * The first three signatures are the three kinds of {@link Config}. A config that matches none of them is checked
 * by the fourth, {@link Definition}, and only its error is reported (TypeScript reports the last signature alone
 * when more than three fail): at the property that is wrong, e.g. a reconcile whose errors are not all outcomes,
 * with a message that names them and says to use `Reconcile.classify`, `retryable` or `terminal`
 * (`packages/kube/test/compileErrors.test.ts`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: {
  <A extends HasMetadata, E = never, R = never, RW = never>(
    config: ByRequest<A, E, R, RW>
  ): KubeController<E, R | RW>
  <A extends HasMetadata, E = never, R = never, RW = never>(
    config: ByObject<A, E, R, RW>
  ): KubeController<E, R | RW>
  <A extends HasMetadata, E = never, R = never, RW = never>(
    config: ByDecodedObject<A, E, R, RW>
  ): KubeController<E, R | RW>
  <
    A extends HasMetadata,
    E = never,
    RW = never,
    F extends Effect.Effect<unknown, unknown, unknown> = Effect.Effect<void>,
    H extends OnUndecodable | undefined = undefined
  >(
    config: Definition<A, E, RW, F, H>
  ): KubeController<E, Requirements<RW, F, H>>
} = internal.make as any

/**
 * The Layer running a controller for the Layer's lifetime, under the `Manager` (which reports its readiness, ends
 * when it fails and decides when this replica leads) over the shared `Cache`: both are in its type. An ordinary
 * Layer: provide the controller's services with `Layer.provide`, merge it with others, and so on.
 *
 * @example
 * ```ts
 * import { LeaderElection, Manager } from "@reconcile/core"
 * import { Cache, EventRecorder, KubeController, Resource } from "@reconcile/kube"
 * import { Effect, Layer } from "effect"
 *
 * const Settings = KubeController.make({
 *   name: "settings",
 *   for: Resource.ConfigMap,
 *   reconcile: (cm) => EventRecorder.record(cm, { type: "Normal", reason: "Seen", action: "Reconcile" })
 * })
 *
 * const Main = KubeController.layer(Settings).pipe(
 *   Layer.provide(EventRecorder.layer({ controller: "example.com/settings" })),
 *   Layer.provide(Manager.layer({ healthPort: 8081 })),
 *   Layer.provide(LeaderElection.layerAlwaysLeader),
 *   Layer.provide(Cache.layer())
 * ) // Layer<never, HealthServerError, KubeClient>
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: <E, R>(
  self: KubeController<E, R>
) => Layer.Layer<never, never, Cache.Cache | Manager | Exclude<R, Scope.Scope>> = internal.layer

/**
 * Starts a controller in the current scope, under the `Manager`, and returns its handle (`Controller.addWatch`, its
 * queue, readiness).
 *
 * @since 0.1.0
 * @category constructors
 */
export const start: <E, R>(
  self: KubeController<E, R>
) => Effect.Effect<Controller.Controller<E>, never, Cache.Cache | Manager | R | Scope.Scope> = internal.start

/**
 * Whether a value is a {@link KubeController}.
 *
 * @since 0.1.0
 * @category refinements
 */
export const isKubeController: (u: unknown) => u is KubeController<unknown, unknown> = internal.isKubeController
