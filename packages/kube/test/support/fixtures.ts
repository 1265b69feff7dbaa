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
