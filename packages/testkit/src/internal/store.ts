/**
 * The synchronous in-memory API server: the verbs over the storage (`storage.ts`) and deletion (`deletion.ts`).
 * A write is decoded (`requestBody.ts`), defaulted and validated (`validation.ts`; custom resources by their
 * structural schema, `structural.ts`), given its managedFields (`managedFields.ts`) and the strategy's rules
 * (`strategy.ts`), then committed; patches are applied first (`patch.ts`), events.k8s.io/v1 writes converted to
 * core/v1 (`events.ts`). Those modules are functions of objects: none of them knows the storage. Operations throw
 * an `ApiError` (a metav1.Status); `TestCluster` and the HTTP server convert them at their boundary. When a request
 * runs with an `admission` (`admission.ts`, installed by `admissionWebhooks.ts`), its mutating and validating
 * admission points call it where kube-apiserver admits (before the strategy, before storage), and its per-request
 * values (uid, time, generated name, allocated address) are drawn once, so a write can be run again unchanged.
 *
 * Over 500 lines because create, update, patch and apply are one sequence of kube-apiserver's steps with one shared
 * tail (`write`), whose order is the behaviour (what is checked before what decides which error a client sees):
 * read in one place, it can be compared with upstream's handlers step by step.
 */
import { randomUUID } from "node:crypto"
import * as ApiError from "../ApiError.js"
import type { KubeObject, ManagedFieldsEntry, ObjectList, WatchEvent } from "../KubeObject.js"
import { apiVersion, type ResourceType } from "../ResourceType.js"
import { type Admission, type Attributes, withChanges } from "./admission.js"
import { Converter, convertingWatch, type Runner } from "./conversionWebhooks.js"
import * as Deletion from "./deletion.js"
import * as Events from "./events.js"
import { FaultState } from "./faults.js"
import { clone, deepEqual, formatTime, isObject, type Obj } from "./json.js"
import * as ManagedFields from "./managedFields.js"
import { jsonPatch, mergePatch, strategicMergePatch } from "./patch.js"
import type { CoreStorage } from "./persistence.js"
import * as RequestBody from "./requestBody.js"
import { fromCrd, Registry, storageVersionOf } from "./resourceType.js"
import { review } from "./reviews.js"
import { badRequest, conflict, details, groupOf, notFound, qualified } from "./statuses.js"
import { type ListOptions, objKey, type Reading, Storage, type WatchHandle, type WatchOptions } from "./storage.js"
import { conditionalOnly, crdStatus, ownedOnCreate, specChanged, tracksGeneration } from "./strategy.js"
import * as Structural from "./structural.js"
import { checkApply } from "./undeclaredFields.js"
import { defaultAlways, defaultOnCreate, validate, validateName } from "./validation.js"

/** Options of {@link Core}. */
export interface CoreOptions {
  /** Milliseconds since the epoch, for timestamps. */
  readonly now: () => number
  /** How many events the watch history keeps before compacting (default 10 000). */
  readonly historySize?: number | undefined
  /** Whether deleting a Namespace deletes its objects (the namespace controller; default true). */
  readonly namespaceLifecycle?: boolean | undefined
  /** Feature gates, as kube-apiserver's `--feature-gates` (see `TestCluster.Options.featureGates`). */
  readonly featureGates?: { readonly ShardedListAndWatch?: boolean | undefined } | undefined
  /** Seed of the fault injection random draws (default 0). */
  readonly seed?: number | undefined
  /** Objects and counter to restore, and the journal that makes each later event durable before it is applied. */
  readonly storage?: CoreStorage | undefined
}

/** Options of a write. */
export interface WriteOptions {
  readonly fieldManager?: string | undefined
  readonly subresource?: string | undefined
  /** `dryRun=All`: validate, default and admit, store nothing, send no watch event; return the would-be object. */
  readonly dryRun?: boolean | undefined
}

/** The patch types, by the content type's name (`application/<type>-patch+json`; apply: `apply-patch+yaml`). */
export type PatchType = "json" | "merge" | "strategic" | "apply"

const isCrdKind = (rt: ResourceType): boolean =>
  rt.kind === "CustomResourceDefinition" && rt.group === "apiextensions.k8s.io"

/** The in-memory API server. */
export class Core {
  readonly registry = new Registry()
  readonly storage: Storage
  readonly namespaceLifecycle: boolean
  readonly now: () => number
  readonly faults: FaultState
  /** Set when the start with storage failed (writing the default namespaces or resuming cut-short work). */
  readonly startupError: ApiError.ApiError | undefined
  /**
   * The admission of the request being written (`admissionWebhooks.ts` installs it around one synchronous run of
   * a write): called at the mutating and validating admission points; none for the cluster's own writes.
   */
  admission: Admission | undefined = undefined
  /** The conversions of custom resources between their versions (by their CRD's conversion webhook). */
  readonly converter: Converter = new Converter(this)

  constructor(options: CoreOptions) {
    this.now = options.now
    this.faults = new FaultState(options.seed ?? 0)
    this.namespaceLifecycle = options.namespaceLifecycle ?? true
    this.storage = new Storage({
      registry: this.registry,
      historySize: Math.max(1, options.historySize ?? 10_000),
      journal: options.storage?.journal,
      present: (rt, obj, reading) => this.present(rt, obj, reading),
      shardedListAndWatch: options.featureGates?.ShardedListAndWatch
    })
    try {
      if (options.storage !== undefined && options.storage.rv > 0) {
        this.storage.restore(options.storage)
        Deletion.resume(this)
      } else {
        const ns = this.registry.byKind("", "v1", "Namespace")!
        for (const name of ["default", "kube-system", "kube-public", "kube-node-lease"]) {
          this.create(ns, undefined, { apiVersion: "v1", kind: "Namespace", metadata: { name } }, {
            fieldManager: "kube-apiserver"
          })
        }
      }
    } catch (e) {
      this.startupError = e instanceof ApiError.ApiError
        ? e
        : ApiError.make(500, "InternalError", `restore failed: ${e instanceof Error ? e.message : String(e)}`)
    }
  }

  /**
   * A stored object shown at the resource's version: converted to it (by the CRD's conversion webhook, `Suspended`
   * until its answer is in), custom resources pruned and defaulted for it. To a reader that only views it
   * (`Reading`), a built-in kind's object (nothing pruned, defaulted or converted on read) is a shallow copy sharing
   * the stored object's fields; to one that converts it itself (`stored`), a copy as stored.
   */
  present(rt: ResourceType, obj: Obj, reading: Reading = "copy"): KubeObject {
    if (reading === "stored") return clone(obj) as KubeObject
    if (reading === "view" && rt.schema === undefined && !Events.isEventsV1(rt) && !Events.isCoreEvent(rt)) {
      return { ...obj, apiVersion: apiVersion(rt) } as KubeObject
    }
    const out = rt.schema === undefined ? clone(obj) : this.converter.convert(rt, apiVersion(rt), obj)
    out.apiVersion = apiVersion(rt)
    // Custom resources are pruned and defaulted on read too (a default added to the schema later shows).
    if (rt.schema !== undefined) Structural.decode(rt, out)
    return Events.present(rt, out) as KubeObject
  }

  /** A custom resource as it is stored: in its CRD's storage version (converted by its webhook, or relabelled). */
  private storageForm(rt: ResourceType, obj: Obj): Obj {
    const storage = storageVersionOf(rt)
    if (storage === undefined || storage === rt.version) return obj
    const stored = this.converter.convert(rt, `${rt.group}/${storage}`, obj)
    // the answer is the stored object converted back: asked for now, before anything is stored
    if (this.converter.viaWebhook(rt)) this.present(rt, stored)
    return stored
  }

  /** A stored object in the version of the request (for the update of an object stored in another version). */
  private inVersion(rt: ResourceType, stored: Obj): Obj {
    return rt.schema === undefined || stored.apiVersion === apiVersion(rt) ? stored : this.present(rt, stored) as Obj
  }

  /** A per-request value: the same on every run of a write suspended for admission or conversion webhooks. */
  private once<A>(key: string, make: () => A): A {
    return this.converter.session === undefined ? make() : this.converter.session.once(key, make)
  }

  /** The request's time (one per request). */
  private time(): number {
    return this.once("now", this.now)
  }

  /**
   * The mutating admission point: the object as the mutating webhooks leave it, decoded again. A created built-in
   * object is shown with the defaults kube-apiserver's decoding and earlier admission plugins give it (a Service
   * without its address), and what the webhooks change in that view is carried onto the request's object.
   */
  private mutated(
    rt: ResourceType,
    attributes: Omit<Attributes, "rt">,
    decoded: Obj,
    view: Obj = this.present(rt, decoded) as Obj
  ): Obj {
    if (this.admission === undefined || attributes.subresource === "scale") return decoded
    if (attributes.operation === "DELETE") {
      // a DELETE shows the mutating webhooks no object (kube-apiserver's delete handler)
      this.admission.mutate({ rt, ...attributes, object: undefined })
      return decoded
    }
    const out = this.admission.mutate({ rt, ...attributes, object: view })
    if (out === undefined || out === view) return decoded
    return RequestBody.decode(this.registry, rt, withChanges(this.present(rt, decoded) as Obj, view, out))
  }

  /**
   * A created object as the mutating webhooks are shown it: a built-in one with the defaults kube-apiserver's
   * decoding and the admission plugins before the webhooks give it (a Service without its address, no status).
   */
  private creationView(rt: ResourceType, decoded: Obj): Obj {
    const shown = this.present(rt, decoded) as Obj
    if (rt.schema !== undefined || (rt.group === "" && rt.kind === "Service")) return shown
    const view = clone(shown)
    defaultOnCreate(rt, view)
    if (shown.status === undefined) delete view.status
    else view.status = clone(shown.status)
    return view
  }

  /** The validating admission point (`object` is what the written object would be stored as). */
  private validated(rt: ResourceType, attributes: Omit<Attributes, "rt">, object?: Obj): void {
    if (this.admission === undefined || attributes.subresource === "scale") return
    this.admission.validate({
      rt,
      ...attributes,
      ...(object !== undefined ? { object: this.present(rt, object) as Obj } : {})
    })
  }

  // ---------------------------------------------------------------------------------------------------------------
  // resources and reads

  resourceVersion(): string {
    return this.storage.resourceVersion()
  }

  /** The resource type for an apiVersion and kind; 404 when it is not served. */
  resolveKind(apiVersion: string, kind: string): ResourceType {
    const slash = apiVersion.indexOf("/")
    const group = slash < 0 ? "" : apiVersion.slice(0, slash)
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1)
    const rt = this.registry.byKind(group, version, kind)
    if (rt === undefined) {
      throw ApiError.make(
        404,
        "NotFound",
        `the server could not find the requested resource (kind ${kind} in ${apiVersion})`
      )
    }
    return rt
  }

  get(rt: ResourceType, namespace: string | undefined, name: string, reading: Reading = "copy"): KubeObject {
    return this.present(rt, this.existing(rt, namespace, name), reading)
  }

  list(rt: ResourceType, namespace: string | undefined, options: ListOptions, reading: Reading = "copy"): ObjectList {
    return this.storage.list(rt, namespace, options, reading)
  }

  /**
   * A watch of `rt`: its events given to `sink`. Of a kind converted by a webhook, each event's object is converted
   * first, in order (`run` makes the webhook calls, on the caller's fiber); `send` gives the watch an event of the
   * caller's own (a bookmark) in its place among them.
   */
  watch(
    rt: ResourceType,
    namespace: string | undefined,
    options: WatchOptions,
    sink: (event: WatchEvent) => void,
    reading: Reading = "copy",
    run?: Runner
  ): WatchHandle & { readonly send: (event: WatchEvent) => void } {
    if (!this.converter.viaWebhook(rt)) {
      const handle = this.storage.watch(rt, namespace, options, sink, reading)
      return { open: handle.open, close: handle.close, send: sink }
    }
    const converting = convertingWatch(this, sink, (obj) => this.present(rt, obj, reading), run)
    const handle = this.storage.watch(rt, namespace, options, converting.send, "stored")
    return {
      open: handle.open,
      close: () => {
        converting.close()
        handle.close()
      },
      send: converting.send
    }
  }

  /** A BOOKMARK event at the current resourceVersion. */
  bookmark(rt: ResourceType, annotations?: Record<string, string>): WatchEvent {
    return this.storage.bookmark(rt, annotations)
  }

  /** Forgets the watch history: watches and continue tokens from earlier versions get 410. */
  compact(): void {
    this.storage.compact()
  }

  /** The number of open watches (for tests and fault injection). */
  watchCount(): number {
    return this.storage.watchCount()
  }

  private existing(rt: ResourceType, namespace: string | undefined, name: string): Obj {
    const obj = this.storage.stored(rt, namespace, name)
    if (obj === undefined) throw notFound(rt, name)
    return obj
  }

  // ---------------------------------------------------------------------------------------------------------------
  // create

  private checkNamespace(rt: ResourceType, namespace: string | undefined, name: string): void {
    if (rt.scope === "Cluster") return
    if (namespace === undefined || namespace === "") {
      throw badRequest("a namespace is required for namespaced resources")
    }
    const ns = this.storage.objects(this.registry.byKind("", "v1", "Namespace")!).get(namespace)
    if (ns === undefined) {
      throw ApiError.make(404, "NotFound", `namespaces "${namespace}" not found`, {
        name: namespace,
        kind: "namespaces"
      })
    }
    if (ns.metadata.deletionTimestamp !== undefined) {
      throw ApiError.make(
        403,
        "Forbidden",
        `${
          qualified(rt)
        } "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
        {
          ...details(rt, name),
          causes: [{
            reason: "NamespaceTerminating",
            message: `namespace ${namespace} is being terminated`,
            field: "metadata.namespace"
          }]
        }
      )
    }
  }

  create(
    rt: ResourceType,
    namespace: string | undefined,
    body: unknown,
    options: WriteOptions & { readonly managed?: (obj: Obj) => Array<ManagedFieldsEntry> }
  ): KubeObject {
    if (Events.isEventsV1(rt)) {
      return Events.createV1(
        rt,
        namespace,
        body,
        (converted) => this.create(this.eventType(), namespace, converted, options)
      )
    }
    let obj = RequestBody.decode(this.registry, rt, body)
    if (rt.createOnly === true) return review(rt, obj)
    let meta = obj.metadata as Obj
    const placeNamespace = () => {
      if (rt.scope === "Namespaced") {
        if (
          meta.namespace !== undefined && meta.namespace !== "" && namespace !== undefined &&
          meta.namespace !== namespace
        ) {
          throw badRequest("the namespace of the provided object does not match the namespace sent on the request")
        }
        meta.namespace = namespace ?? meta.namespace
      } else {
        delete meta.namespace
      }
    }
    placeNamespace()
    // the request's object, as the webhooks were shown it, and as they left it (when they changed it)
    let requested: Obj | undefined
    let shownView: Obj | undefined
    let mutatedRequest: Obj | undefined
    if (this.admission !== undefined) {
      requested = obj
      shownView = this.creationView(rt, obj)
      // NamespaceLifecycle, then the mutating webhooks (before the name is generated and the strategy runs)
      this.checkNamespace(rt, meta.namespace, typeof meta.name === "string" ? meta.name : "")
      obj = this.mutated(
        rt,
        {
          subresource: undefined,
          operation: "CREATE",
          namespace: meta.namespace,
          name: typeof meta.name === "string" ? meta.name : "",
          object: undefined,
          oldObject: undefined,
          dryRun: options.dryRun === true
        },
        obj,
        shownView
      )
      meta = obj.metadata as Obj
      placeNamespace()
      if (requested === obj) requested = undefined
      else mutatedRequest = clone(obj)
    }
    if (
      (meta.name === undefined || meta.name === "") && typeof meta.generateName === "string" && meta.generateName !== ""
    ) {
      meta.name = this.once("name", () => this.generateName(rt, meta.namespace, meta.generateName))
    }
    if (typeof meta.name !== "string" || meta.name === "") {
      throw ApiError.make(
        422,
        "Invalid",
        `${rt.kind} "" is invalid: metadata.name: Required value: name or generateName is required`,
        {
          ...groupOf(rt),
          kind: rt.kind,
          causes: [{
            reason: "FieldValueRequired",
            message: "Required value: name or generateName is required",
            field: "metadata.name"
          }]
        }
      )
    }
    const causes: Array<ApiError.StatusCause> = []
    validateName(rt, meta.name, causes)
    if (causes.length > 0) {
      // reported with every other problem of the object, as upstream's validation does
      const candidate = clone(obj)
      defaultOnCreate(rt, candidate)
      validate(rt, candidate, undefined, causes)
      throw ApiError.make(
        422,
        "Invalid",
        `${rt.kind} "${meta.name}" is invalid: metadata.name: ${causes[0]!.message}`,
        {
          name: meta.name,
          ...groupOf(rt),
          kind: rt.kind,
          causes
        }
      )
    }
    this.checkNamespace(rt, meta.namespace, meta.name)
    if (this.storage.objects(rt).has(objKey(meta.namespace, meta.name))) {
      throw ApiError.make(
        409,
        "AlreadyExists",
        `${qualified(rt)} "${meta.name}" already exists`,
        details(rt, meta.name)
      )
    }
    const now = formatTime(this.time())
    meta.uid = this.once("uid", randomUUID)
    meta.creationTimestamp = now
    for (
      const f of ["resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink"]
    ) {
      delete meta[f]
    }
    if (tracksGeneration(rt)) meta.generation = 1
    else delete meta.generation
    if (rt.hasStatus) delete obj.status
    const decoded = clone(obj)
    defaultOnCreate(rt, obj)
    if (this.admission !== undefined && rt.group === "" && rt.kind === "Service" && obj.spec?.clusterIP !== undefined) {
      // the address allocated on the request's first run (each run allocates one)
      const ip = this.once("clusterIP", () => obj.spec.clusterIP)
      obj.spec.clusterIP = ip
      obj.spec.clusterIPs = [ip]
    }
    if (isCrdKind(rt)) crdStatus(obj, () => this.time())
    validate(rt, obj, undefined)
    meta.managedFields = options.managed !== undefined
      ? options.managed(obj)
      : ManagedFields.afterUpdate(
        rt,
        undefined,
        requested === undefined || mutatedRequest === undefined || shownView === undefined
          ? ownedOnCreate(rt, decoded, obj)
          : ownedOnCreate(
            rt,
            rt.hasStatus ? { ...requested, status: undefined } : requested,
            withChanges(obj, mutatedRequest, shownView)
          ),
        options.fieldManager ?? "unknown",
        undefined,
        now
      )
    if (meta.managedFields.length === 0) delete meta.managedFields
    this.validated(rt, {
      subresource: undefined,
      operation: "CREATE",
      namespace: meta.namespace,
      name: meta.name,
      object: undefined,
      oldObject: undefined,
      dryRun: options.dryRun === true
    }, obj)
    // converted to the storage version even in a dry run (kube-apiserver's dry-run storage encodes it)
    const toStore = this.storageForm(rt, obj)
    if (options.dryRun === true) return this.present(rt, obj)
    const stored = this.storage.commit(rt, "ADDED", toStore, undefined)
    if (isCrdKind(rt)) this.registry.setCrd(obj.spec.group, obj.spec.names.plural, fromCrd(obj))
    const created = this.present(rt, stored)
    Deletion.collectIfOrphaned(this, stored)
    return created
  }

  private generateName(rt: ResourceType, namespace: string | undefined, prefix: string): string {
    const alphabet = "bcdfghjklmnpqrstvwxz2456789"
    for (;;) {
      let suffix = ""
      for (let i = 0; i < 5; i++) suffix += alphabet[Math.floor(Math.random() * alphabet.length)]
      const name = `${prefix}${suffix}`
      if (!this.storage.objects(rt).has(objKey(namespace, name))) return name
    }
  }

  /** core/v1 Events: the storage of events.k8s.io/v1 ones too. */
  private eventType(): ResourceType {
    return this.registry.byKind("", "v1", "Event")!
  }

  // ---------------------------------------------------------------------------------------------------------------
  // update, patch, apply

  /** PUT: `replace`, refused without `metadata.resourceVersion` for the kinds that need one (see `conditionalOnly`). */
  update(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: WriteOptions
  ): KubeObject {
    return this.replace(rt, namespace, name, body, options, true)
  }

  private replace(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: WriteOptions,
    put: boolean
  ): KubeObject {
    if (Events.isEventsV1(rt)) {
      return Events.updateV1(
        rt,
        this.get(rt, namespace, name) as Obj,
        body,
        (converted) => this.update(this.eventType(), namespace, name, converted, options)
      )
    }
    // "scale": the parent write of a `/scale` update (scale.ts), recorded in managedFields as the scale subresource
    const scale = options.subresource === "scale" && rt.scale !== undefined
    if (options.subresource !== undefined && (options.subresource !== "status" || !rt.hasStatus) && !scale) {
      throw notFound(rt, name)
    }
    const existing = this.existing(rt, namespace, name)
    const candidate = RequestBody.decode(this.registry, rt, body)
    if (candidate.metadata.name !== undefined && candidate.metadata.name !== name) {
      throw badRequest(
        `the name of the object (${candidate.metadata.name}) does not match the name on the URL (${name})`
      )
    }
    if (
      rt.scope === "Namespaced" && candidate.metadata.namespace !== undefined && candidate.metadata.namespace !== "" &&
      candidate.metadata.namespace !== existing.metadata.namespace
    ) {
      throw badRequest("the namespace of the provided object does not match the namespace sent on the request")
    }
    const rv = candidate.metadata.resourceVersion
    if (put && (rv === undefined || rv === "") && conditionalOnly(rt)) {
      const message = "Invalid value: 0: must be specified for an update"
      throw ApiError.make(
        422,
        "Invalid",
        `${qualified(rt)} "${name}" is invalid: metadata.resourceVersion: ${message}`,
        { ...details(rt, name), causes: [{ reason: "FieldValueInvalid", message, field: "metadata.resourceVersion" }] }
      )
    }
    const manager = options.fieldManager ?? "unknown"
    const subresource = options.subresource
    return this.write(
      rt,
      existing,
      candidate,
      subresource,
      (old, next) => ManagedFields.afterUpdate(rt, old, next, manager, subresource, formatTime(this.time())),
      options.dryRun === true
    )
  }

  /** The shared tail of update, patch and apply. */
  private write(
    rt: ResourceType,
    existing: Obj,
    candidate: Obj,
    subresource: string | undefined,
    managed: (old: Obj, next: Obj) => Array<ManagedFieldsEntry>,
    dryRun = false
  ): KubeObject {
    const name = existing.metadata.name as string
    // the stored object in the request's version: what the update is made on (`existing` stays as stored)
    const old = this.inVersion(rt, existing)
    const attributes = this.admission === undefined ? undefined : {
      subresource,
      operation: "UPDATE" as const,
      namespace: existing.metadata.namespace as string | undefined,
      name,
      object: undefined,
      oldObject: this.present(rt, old) as Obj,
      dryRun
    }
    const requested = candidate
    if (attributes !== undefined) candidate = this.mutated(rt, attributes, candidate)
    const rv = candidate.metadata.resourceVersion
    if (rv !== undefined && rv !== "" && rv !== existing.metadata.resourceVersion) throw conflict(rt, name)
    let next: Obj
    if (subresource === "status") {
      next = clone(old)
      if (candidate.status === undefined) delete next.status
      else next.status = clone(candidate.status)
    } else {
      next = candidate
      const meta = next.metadata as Obj
      for (
        const f of [
          "name",
          "namespace",
          "uid",
          "creationTimestamp",
          "deletionTimestamp",
          "deletionGracePeriodSeconds",
          "generation"
        ]
      ) {
        if (old.metadata[f] === undefined) delete meta[f]
        else meta[f] = old.metadata[f]
      }
      if (rt.hasStatus) {
        if (old.status === undefined) delete next.status
        else next.status = clone(old.status)
      }
      defaultAlways(rt, next, old)
    }
    delete next.metadata.resourceVersion
    delete next.metadata.managedFields
    delete next.metadata.selfLink
    Deletion.checkNoNewFinalizers(rt, old, next)
    validate(rt, next, old)
    if (tracksGeneration(rt) && specChanged(rt, old, next)) {
      next.metadata.generation = (old.metadata.generation ?? 0) + 1
    }
    const entries = managed(old, requested === candidate ? next : withChanges(next, candidate, requested))
    if (entries.length > 0) next.metadata.managedFields = entries
    if (attributes !== undefined) this.validated(rt, attributes, next)
    // compared as stored: an update that changes nothing there stores nothing (kube-apiserver compares the bytes)
    const toStore = this.storageForm(rt, next)
    const before = { ...existing, metadata: { ...existing.metadata, resourceVersion: undefined } }
    if (deepEqual(before, toStore)) return this.present(rt, existing)
    // dry run: the would-be object keeps the stored resourceVersion (kube-apiserver's dry-run storage)
    if (dryRun) {
      const rv = existing.metadata.resourceVersion
      return this.present(rt, { ...next, metadata: { ...next.metadata, resourceVersion: rv } })
    }
    if (
      existing.metadata.deletionTimestamp !== undefined && Deletion.finalizersOf(next).length === 0 &&
      !(rt.kind === "Namespace" && rt.group === "")
    ) {
      // the stored object is deleted as it was (its last finalizer still in the DELETED event); the write answers
      // the written object at the last stored resourceVersion (kube-apiserver's deletion on a finalizer removal)
      Deletion.remove(this, rt, clone(existing), existing)
      return this.present(rt, {
        ...next,
        metadata: { ...next.metadata, resourceVersion: existing.metadata.resourceVersion }
      })
    }
    const stored = this.storage.commit(rt, "MODIFIED", toStore, existing)
    if (isCrdKind(rt) && subresource !== "status") {
      this.registry.setCrd(next.spec.group, next.spec.names.plural, fromCrd(next))
    }
    if (rt.kind === "Namespace" && rt.group === "") Deletion.finishNamespace(this, name)
    const written = this.present(rt, stored)
    Deletion.collectIfOrphaned(this, stored)
    return written
  }

  patch(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patch: unknown,
    options: WriteOptions & { readonly force?: boolean | undefined }
  ): { readonly object: KubeObject; readonly created: boolean } {
    if (options.subresource !== undefined && (options.subresource !== "status" || !rt.hasStatus)) {
      throw notFound(rt, name)
    }
    if (type === "apply" && Events.isEventsV1(rt)) {
      checkApply(rt, patch)
      const eventType = this.eventType()
      return Events.applyV1(
        namespace,
        name,
        patch,
        () => this.storage.stored(eventType, namespace, name) !== undefined,
        (converted) => this.patch(eventType, namespace, name, "apply", converted, options)
      )
    }
    if (type === "apply") return this.apply(rt, namespace, name, patch, options)
    const existing = this.existing(rt, namespace, name)
    const base = this.present(rt, existing) as Obj
    let patched: unknown
    if (type === "json") patched = jsonPatch(base, patch)
    else if (!isObject(patch)) throw badRequest("the patch must be a JSON object")
    else patched = type === "merge" ? mergePatch(base, patch) : strategicMergePatch(rt, base, patch)
    if (!isObject(patched)) throw ApiError.make(422, "Invalid", "the patched object is not a JSON object")
    return { object: this.replace(rt, namespace, name, patched, options, false), created: false }
  }

  private apply(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    config: unknown,
    options: WriteOptions & { readonly force?: boolean | undefined }
  ): { readonly object: KubeObject; readonly created: boolean } {
    const manager = options.fieldManager
    if (manager === undefined || manager === "") {
      throw badRequest("PATCH, application/apply-patch+yaml requests require the fieldManager parameter")
    }
    if (!isObject(config)) throw badRequest("the apply configuration must be an object")
    if (config.apiVersion === undefined || config.kind === undefined) {
      throw badRequest("apiVersion and kind must be set in an apply configuration")
    }
    const body = RequestBody.decode(this.registry, rt, config)
    checkApply(rt, config)
    if (body.metadata.name !== undefined && body.metadata.name !== name) {
      throw badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${name})`)
    }
    body.metadata.name = name
    if (Array.isArray(body.metadata.managedFields) && body.metadata.managedFields.length > 0) {
      throw badRequest("metadata.managedFields must be nil")
    }
    const force = options.force === true
    const subresource = options.subresource
    const time = formatTime(this.time())
    const existing = this.storage.stored(rt, namespace, name)
    if (existing === undefined) {
      if (subresource !== undefined) throw notFound(rt, name)
      const result = ManagedFields.apply(rt, undefined, body, manager, force, undefined, time)
      const object: Obj = { ...result.object, apiVersion: body.apiVersion, kind: body.kind }
      object.metadata = {
        ...object.metadata,
        name,
        ...(rt.scope === "Namespaced" && namespace !== undefined ? { namespace } : {})
      }
      const created = this.create(rt, namespace, object, {
        managed: () => result.managedFields,
        dryRun: options.dryRun
      })
      return { object: created, created: true }
    }
    const rv = body.metadata.resourceVersion
    if (rv !== undefined && rv !== "" && rv !== existing.metadata.resourceVersion) throw conflict(rt, name)
    const live = this.present(rt, existing) as Obj
    const result = ManagedFields.apply(rt, live, body, manager, force, subresource, time)
    const candidate: Obj = { ...result.object, apiVersion: live.apiVersion, kind: live.kind }
    candidate.metadata = { ...candidate.metadata }
    return {
      object: this.write(rt, existing, candidate, subresource, () => result.managedFields, options.dryRun === true),
      created: false
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // delete

  /** DELETE (see `deletion.ts`): the object as it stays while something holds it, or as it was removed. */
  delete(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    options: Deletion.DeleteOptions
  ): { readonly object: KubeObject; readonly deleted: boolean } {
    const existing = this.existing(rt, namespace, name)
    if (this.admission !== undefined) {
      const attributes = {
        subresource: undefined,
        operation: "DELETE" as const,
        namespace: existing.metadata.namespace as string | undefined,
        name,
        object: undefined,
        oldObject: undefined,
        dryRun: options.dryRun === true
      }
      this.mutated(rt, attributes, existing)
      this.validated(rt, { ...attributes, oldObject: this.present(rt, existing) as Obj })
    }
    // the answer converted before anything is deleted (the deletion changes only the metadata it keeps)
    if (this.converter.viaWebhook(rt)) this.present(rt, existing)
    const result = Deletion.request(this, rt, existing, options)
    return { object: this.present(rt, result.object), deleted: result.deleted }
  }
}
