/**
 * A custom resource used across the tests.
 */
import { Effect, Schema } from "effect"
import * as Resource from "../../src/Resource.js"

const Port = Schema.Struct({
  name: Schema.String,
  port: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 65535 }))
}).annotate({ identifier: "Port", description: "a named port" })

export const WebAppSpec = Schema.Struct({
  image: Schema.String.check(Schema.isMinLength(1)),
  // effect 3's nonNegative() is gone: isGreaterThanOrEqualTo(0)
  replicas: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  // effect 3's optionalWith({ default }): a missing (or undefined) value decodes to []
  ports: Schema.Array(Port).pipe(Schema.withDecodingDefaultType(Effect.succeed([]))),
  mode: Schema.optional(Schema.Literals(["rolling", "recreate"])),
  labels: Schema.optional(Schema.Record(Schema.String, Schema.String)),
  // effect 3's Schema.Date (an ISO string decoded to a Date) is DateFromString
  startAt: Schema.optional(Schema.DateFromString),
  weight: Schema.optional(Schema.NullOr(Schema.Number.check(Schema.isGreaterThan(0)))),
  target: Schema.optional(Schema.Union([Schema.Int, Schema.String])),
  extra: Schema.optional(Schema.Unknown),
  strategy: Schema.optional(Schema.Union([
    Schema.TaggedStruct("Canary", { percent: Schema.Int }),
    Schema.TaggedStruct("BlueGreen", { preview: Schema.Boolean })
  ])),
  pair: Schema.optional(Schema.Tuple([Schema.String, Schema.Number]))
})

export const WebAppStatus = Schema.Struct({
  readyReplicas: Schema.optional(Schema.Int),
  conditions: Schema.optional(Schema.Array(Schema.Struct({ type: Schema.String, status: Schema.String })))
})

export const WebApp = Resource.custom({
  group: "example.com",
  version: "v1",
  kind: "WebApp",
  plural: "webapps",
  shortNames: ["wa"],
  scope: "Namespaced",
  spec: WebAppSpec,
  status: WebAppStatus
})

/**
 * A custom resource's CRD as an older operator release could have installed it: any spec and status
 * (`x-kubernetes-preserve-unknown-fields`). The API server validates custom resources against their CRD's schema, so
 * tests that store objects the Schema rejects (objects that no longer decode) install this one.
 */
export const looseCrdManifest = (
  resource: Resource.CustomResource<any, any, any, any>
): Resource.CustomResourceDefinition => {
  const crd = Resource.crdManifest(resource)
  const any = { type: "object", "x-kubernetes-preserve-unknown-fields": true }
  const schema = {
    type: "object",
    properties: {
      apiVersion: { type: "string" },
      kind: { type: "string" },
      metadata: { type: "object" },
      spec: any,
      status: any
    }
  }
  return {
    ...crd,
    spec: { ...crd.spec, versions: crd.spec.versions.map((v) => ({ ...v, schema: { openAPIV3Schema: schema } })) }
  } as Resource.CustomResourceDefinition
}
