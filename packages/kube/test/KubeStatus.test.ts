import { assert, describe, it } from "@effect/vitest"
import { Duration } from "effect"
import * as KubeError from "../src/KubeError.js"
import * as KubeStatus from "../src/KubeStatus.js"

const status = (code: number, reason?: string, extra: Partial<KubeStatus.Status> = {}): KubeStatus.Status => ({
  kind: "Status",
  apiVersion: "v1",
  status: "Failure",
  message: `${reason ?? "code"} message`,
  ...(reason !== undefined ? { reason } : {}),
  code,
  ...extra
})

describe("KubeStatus.toError", () => {
  it("maps reasons and codes to tagged errors", () => {
    const cases: ReadonlyArray<[KubeStatus.Status, string]> = [
      [status(404, "NotFound"), "NotFound"],
      [status(409, "AlreadyExists"), "AlreadyExists"],
      [status(409, "Conflict"), "Conflict"],
      [status(410, "Expired"), "Gone"],
      [status(410, "Gone"), "Gone"],
      [status(422, "Invalid"), "Invalid"],
      [status(400, "BadRequest"), "BadRequest"],
      [status(401, "Unauthorized"), "Unauthorized"],
      [status(403, "Forbidden"), "Forbidden"],
      [status(405, "MethodNotAllowed"), "MethodNotAllowed"],
      [status(429, "TooManyRequests"), "TooManyRequests"],
      [status(500, "InternalError"), "ServerError"],
      [status(503, "ServiceUnavailable"), "ServerError"],
      [status(504, "Timeout"), "Timeout"],
      [status(500, "ServerTimeout"), "Timeout"],
      [status(415, "UnsupportedMediaType"), "UnexpectedStatus"],
      // code only (a proxy's answer, a Status without reason)
      [status(404), "NotFound"],
      [status(409), "Conflict"],
      [status(410), "Gone"],
      [status(422), "Invalid"],
      [status(403), "Forbidden"],
      [status(502), "ServerError"],
      [status(504), "Timeout"],
      [status(418), "UnexpectedStatus"]
    ]
    for (const [s, tag] of cases) {
      const e = KubeStatus.toError(s)
      assert.strictEqual(e._tag, tag, JSON.stringify(s))
      assert.isTrue(KubeError.isKubeError(e))
    }
  })

  it("uses the HTTP code when the Status has none", () => {
    const e = KubeStatus.toError({ message: "nope" }, { code: 403 })
    assert.strictEqual(e._tag, "Forbidden")
    assert.strictEqual(e.status.code, 403)
  })

  it("Invalid carries one cause per field and names them in its message", () => {
    const e = KubeStatus.toError(
      status(422, "Invalid", {
        message: "ConfigMap \"Bad\" is invalid",
        details: {
          name: "Bad",
          kind: "ConfigMap",
          causes: [{ reason: "FieldValueInvalid", field: "metadata.name", message: "Invalid value: \"Bad\"" }]
        }
      }),
      { request: { method: "POST", path: "/api/v1/namespaces/default/configmaps" } }
    )
    assert(e._tag === "Invalid")
    assert.deepStrictEqual(e.causes.map((c) => c.field), ["metadata.name"])
    assert.include(e.message, "POST /api/v1/namespaces/default/configmaps")
    assert.include(e.message, "metadata.name")
  })

  it("TooManyRequests: the Retry-After header wins over details.retryAfterSeconds", () => {
    const fromDetails = KubeStatus.toError(status(429, "TooManyRequests", { details: { retryAfterSeconds: 3 } }))
    assert(fromDetails._tag === "TooManyRequests")
    assert.deepStrictEqual(fromDetails.retryAfter, Duration.seconds(3))
    const fromHeader = KubeStatus.toError(status(429, "TooManyRequests", { details: { retryAfterSeconds: 3 } }), {
      retryAfter: Duration.seconds(7)
    })
    assert(fromHeader._tag === "TooManyRequests")
    assert.deepStrictEqual(fromHeader.retryAfter, Duration.seconds(7))
    const none = KubeStatus.toError(status(429))
    assert(none._tag === "TooManyRequests")
    assert.isUndefined(none.retryAfter)
  })
})
