/**
 * A custom resource used across the tests.
 */
import { Schema } from "effect"
import * as Resource from "../../src/Resource.js"

const Port = Schema.Struct({
  name: Schema.String,
  port: Schema.Int.pipe(Schema.between(1, 65535))
}).annotations({ identifier: "Port", description: "a named port" })

export const WebAppSpec = Schema.Struct({
  image: Schema.String.pipe(Schema.minLength(1)),
  replicas: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  ports: Schema.optionalWith(Schema.Array(Port), { default: () => [] }),
  mode: Schema.optional(Schema.Literal("rolling", "recreate")),
  labels: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  startAt: Schema.optional(Schema.Date),
  weight: Schema.optional(Schema.NullOr(Schema.Number.pipe(Schema.greaterThan(0)))),
  target: Schema.optional(Schema.Union(Schema.Int, Schema.String)),
  extra: Schema.optional(Schema.Unknown),
  strategy: Schema.optional(Schema.Union(
    Schema.TaggedStruct("Canary", { percent: Schema.Int }),
    Schema.TaggedStruct("BlueGreen", { preview: Schema.Boolean })
  )),
  pair: Schema.optional(Schema.Tuple(Schema.String, Schema.Number))
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

