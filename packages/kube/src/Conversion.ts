/**
 * Conversion webhooks for custom resources served in several versions: the
 * `Resource.custom` descriptors of one kind make one CRD
 * (`Resource.crdManifests`); this module converts objects between them when
 * kube-apiserver asks (a `ConversionReview`), as controller-runtime's
 * `conversion.Hub` / `conversion.Convertible` do.
 *
 * The rules, each one tested (`test/Conversion.test.ts`, and against a real
 * kube-apiserver in `test/ConversionReal.test.ts`):
 *
 * - **Hub and spoke.** One version is the hub (normally the storage
 *   version). Every other version, a spoke, gives `toHub` and `fromHub`:
 *   pure functions from the decoded object of one version to the `spec` and
 *   `status` of the other, typed by the two versions' Schemas. Spoke to
 *   spoke goes through the hub. Metadata is never the functions' business:
 *   the converted object keeps the original's.
 * - **Lossless round trips.** What the hub has and a spoke cannot express
 *   survives hub → spoke → hub: the spoke's object carries it in the
 *   annotation `conversion.reconcile.dev/<hub version>`, a JSON array of
 *   `{ path, value, rebuilt }` — each place where the hub's `spec`/`status`
 *   (`value`) and what the spoke's `toHub` rebuilds (`rebuilt`) differ. On
 *   the way back each place is restored, unless the spoke's object was
 *   edited there (its `toHub` now rebuilds something else): the edit wins.
 *   The annotation is never on a hub object, and a spoke's object has it
 *   only when its spoke loses something.
 * - **The review handler** answers every body: the converted objects (the
 *   desired `apiVersion`, metadata untouched but for the annotation) with
 *   `Success`, or `Failure` with a message naming the object and the field
 *   (a malformed review, an unknown version, another kind, an object that
 *   does not decode, a conversion function that throws). It never fails.
 * - **The CRD's stanza** ({@link withConversion}) adds `spec.conversion` to
 *   the CRD of each webhook's kind; other CRDs are returned as they were.
 *
 * Why pure functions rather than Effects: kube-apiserver calls the webhook
 * on every read, list item and watch event of a version that is not the
 * stored one, from any replica; a conversion that depends on a service or
 * can fail transiently makes objects unreadable. What a spoke cannot say is
 * not an error but data kept in the annotation. A function that throws
 * anyway is answered as a `Failure` naming the object.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Conversion, Resource } from "@reconcile/kube"
 *
 * const common = { group: "example.com", kind: "WebApp", plural: "webapps", scope: "Namespaced" } as const
 * const V1alpha1 = Resource.custom({
 *   ...common,
 *   version: "v1alpha1",
 *   spec: Schema.Struct({
 *     image: Schema.Struct({ repository: Schema.String, tag: Schema.String }),
 *     instances: Schema.Int
 *   })
 * })
 * const V1 = Resource.custom({
 *   ...common,
 *   version: "v1",
 *   storage: true,
 *   spec: Schema.Struct({ image: Schema.String, replicas: Schema.Int, paused: Schema.optional(Schema.Boolean) })
 * })
 *
 * const WebAppConversion = Conversion.webhook({
 *   hub: V1,
 *   spokes: [{
 *     resource: V1alpha1,
 *     toHub: (o) => ({
 *       spec: { image: `${o.spec.image.repository}:${o.spec.image.tag}`, replicas: o.spec.instances }
 *     }),
 *     fromHub: (o) => {
 *       const at = o.spec.image.lastIndexOf(":")
 *       const image = at < 0 ? { repository: o.spec.image, tag: "" } :
 *         { repository: o.spec.image.slice(0, at), tag: o.spec.image.slice(at + 1) }
 *       return { spec: { image, instances: o.spec.replicas } } // `paused` is kept in the annotation
 *     }
 *   }]
 * })
 * WebAppConversion.route.path // "/convert-example-com-webapp"
 * ```
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as EffectResult from "effect/Result"
import * as internal from "./internal/conversion.js"
import type * as Resource from "./Resource.js"
import type { Route } from "./WebhookServer.js"

/**
 * What a conversion function returns: the `spec` and `status` of the other version, as its Schemas decode them.
 *
 * @since 0.1.0
 * @category models
 */
export interface Content<R extends Resource.AnyCustomResource> {
  readonly spec: Resource.Type<R>["spec"]
  readonly status?: Resource.Type<R>["status"] | undefined
}

/**
 * A spoke: a version other than the hub, and its conversions to and from the hub (controller-runtime's
 * `Convertible` with `ConvertTo` / `ConvertFrom`). `fromHub(toHub(o))` must give `o`'s `spec` and `status` back:
 * the hub says everything every spoke can.
 *
 * @since 0.1.0
 * @category models
 */
export interface Spoke<Hub extends Resource.AnyCustomResource, S extends Resource.AnyCustomResource> {
  readonly resource: S
  /** The hub's `spec` and `status` of a spoke's object (`ConvertTo`). */
  readonly toHub: (spoke: Resource.Type<S>) => Content<Hub>
  /** The spoke's `spec` and `status` of a hub's object (`ConvertFrom`); what it cannot say is kept for it. */
  readonly fromHub: (hub: Resource.Type<Hub>) => Content<S>
}

/**
 * Options of {@link webhook}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<
  Hub extends Resource.AnyCustomResource,
  Spokes extends ReadonlyArray<Resource.AnyCustomResource>
> {
  /** The hub version (controller-runtime's `conversion.Hub`), normally the storage version. */
  readonly hub: Hub
  readonly spokes: { readonly [K in keyof Spokes]: Spoke<Hub, Spokes[K]> }
}

/**
 * A `ConversionReview` response of `apiextensions.k8s.io/v1`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConversionReview {
  readonly apiVersion: "apiextensions.k8s.io/v1"
  readonly kind: "ConversionReview"
  readonly response: {
    /** The request's uid (`""` when the request had none). */
    readonly uid: string
    readonly convertedObjects: ReadonlyArray<unknown>
    readonly result: { readonly status: "Success" } | { readonly status: "Failure"; readonly message: string }
  }
}

/**
 * The conversion webhook of one kind: its route, the kind it converts, and what its CRD's conversion stanza
 * needs ({@link withConversion}).
 *
 * @since 0.1.0
 * @category models
 */
export interface Webhook {
  readonly group: string
  readonly kind: string
  readonly plural: string
  /** The CRD's name, `<plural>.<group>`. */
  readonly crd: string
  readonly hub: Resource.AnyCustomResource
  /** The versions it converts between, the hub's first. */
  readonly versions: ReadonlyArray<string>
  /** The annotation that keeps what a spoke cannot say: `conversion.reconcile.dev/<hub version>`. */
  readonly annotation: string
  /** The `WebhookServer` route: `/convert-<group with dashes>-<kind lowercased>`, answering `ConversionReview`s. */
  readonly route: Route
  /** Converts one object (wire JSON) to `desiredAPIVersion` (`group/version`). */
  readonly convert: (object: unknown, desiredAPIVersion: string) => EffectResult.Result<unknown, ConversionError>
  /** Answers a `ConversionReview` (what the route does). */
  readonly review: (review: unknown) => ConversionReview
}

/**
 * Why a conversion or a conversion stanza failed: a version the webhook does not convert, an object of another
 * kind, an object (or its annotation) that does not decode, a conversion function that threw or made what its
 * Schema does not encode, CRDs that do not match the webhooks. (A malformed review is answered, not an error.)
 *
 * @since 0.1.0
 * @category errors
 */
export class ConversionError extends Data.TaggedError("ConversionError")<{
  readonly reason: "UnknownVersion" | "WrongKind" | "Undecodable" | "Unconvertible" | "CrdMismatch"
  readonly message: string
}> {}

/**
 * The prefix of the annotation that keeps what a spoke cannot say (followed by the hub's version).
 *
 * @since 0.1.0
 * @category constants
 */
export const annotationPrefix: string = internal.annotationPrefix

/**
 * The conversion webhook of a kind: the hub and its spokes, each spoke's functions checked against the two
 * versions' Schemas. Throws (a definition error, at startup) when a spoke is not of the hub's kind or a version is
 * listed twice.
 *
 * @since 0.1.0
 * @category constructors
 */
export const webhook = <
  Hub extends Resource.AnyCustomResource,
  const Spokes extends ReadonlyArray<Resource.AnyCustomResource>
>(options: Options<Hub, Spokes>): Webhook => {
  const hub = options.hub
  const spokes = options.spokes as ReadonlyArray<Spoke<Hub, Resource.AnyCustomResource>>
  const converter = internal.converter(hub, spokes)
  const path = internal.routePath(hub.group, hub.kind)
  const review = (body: unknown) => internal.review(converter, body)
  return {
    group: hub.group,
    kind: hub.kind,
    plural: hub.plural,
    crd: `${hub.plural}.${hub.group}`,
    hub,
    versions: [hub.version, ...spokes.map((s) => s.resource.version)],
    annotation: converter.annotation,
    route: { path, name: path.slice(1), handle: (body) => Effect.sync(() => review(body)) },
    convert: (object, desiredAPIVersion) => converter.convert(object, desiredAPIVersion),
    review
  }
}

/**
 * Where kube-apiserver reaches the webhook server: an in-cluster Service (port default 443), or a URL (the
 * server's base, e.g. `https://127.0.0.1:9443`); the route's path is appended either way. `caBundle` is the PEM of
 * the CA that signed the server's certificate (base64-encoded into the CRD).
 *
 * @since 0.1.0
 * @category models
 */
export type ClientConfig =
  | {
    readonly service: { readonly name: string; readonly namespace: string; readonly port?: number | undefined }
    readonly caBundle?: string | undefined
  }
  | { readonly url: string; readonly caBundle?: string | undefined }

/**
 * A CRD's `spec.conversion` with a webhook.
 *
 * @since 0.1.0
 * @category models
 */
export interface CrdConversion {
  readonly strategy: "Webhook"
  readonly webhook: {
    readonly conversionReviewVersions: ReadonlyArray<string>
    readonly clientConfig:
      | {
        readonly service: {
          readonly name: string
          readonly namespace: string
          readonly path: string
          readonly port: number
        }
        readonly caBundle?: string
      }
      | { readonly url: string; readonly caBundle?: string }
  }
}

/**
 * The `spec.conversion` stanza of a webhook's CRD: `strategy: Webhook`, `conversionReviewVersions: ["v1"]` and
 * the client config with the route's path.
 *
 * @since 0.1.0
 * @category constructors
 */
export const stanza: (webhook: Webhook, clientConfig: ClientConfig) => CrdConversion = internal.stanza

/**
 * CRDs (from `Resource.crdManifests`) with the conversion stanza on each webhook's CRD; the others are returned
 * unchanged. Fails with a `CrdMismatch` when a webhook's CRD is not among them, or its CRD serves a version the
 * webhook does not convert.
 *
 * @example
 * ```ts
 * import { Result, Schema } from "effect"
 * import { Conversion, Resource } from "@reconcile/kube"
 *
 * const common = { group: "example.com", kind: "Greeting", plural: "greetings", scope: "Namespaced" } as const
 * const V1 = Resource.custom({ ...common, version: "v1", spec: Schema.Struct({ text: Schema.String }) })
 * const V2 = Resource.custom({
 *   ...common, version: "v2", storage: true, spec: Schema.Struct({ text: Schema.String, lang: Schema.String })
 * })
 * const GreetingConversion = Conversion.webhook({
 *   hub: V2,
 *   spokes: [{
 *     resource: V1,
 *     toHub: (o) => ({ spec: { ...o.spec, lang: "en" } }),
 *     fromHub: (o) => ({ spec: { text: o.spec.text } }) // `lang` is kept in the annotation
 *   }]
 * })
 * const crds = Result.flatMap(
 *   Resource.crdManifests([V1, V2]),
 *   (crds) => Conversion.withConversion(crds, [GreetingConversion], {
 *     service: { name: "greeter-webhooks", namespace: "greeter" }
 *   })
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const withConversion: (
  crds: ReadonlyArray<Resource.CustomResourceDefinition>,
  webhooks: ReadonlyArray<Webhook>,
  clientConfig: ClientConfig
) => EffectResult.Result<Array<Resource.CustomResourceDefinition>, ConversionError> = internal.withConversion
