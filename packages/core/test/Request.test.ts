import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Equal, Hash, Schema } from "effect"
import * as Request from "../src/Request.js"

const string = (maxLength: number, minLength = 0) =>
  Arbitrary.schema(Schema.String.check(Schema.isMinLength(minLength), Schema.isMaxLength(maxLength)))
const segment = Arbitrary.filter(string(12, 1), (s) => !s.includes("/"))

describe("Request", () => {
  it("key is namespace/name, or the name alone when cluster-scoped", () => {
    assert.strictEqual(Request.key(Request.make("web", "default")), "default/web")
    assert.strictEqual(Request.key(Request.make("node-1")), "node-1")
  })

  it("an empty namespace means cluster-scoped", () => {
    const req = Request.make("node-1", "")
    assert.isUndefined(req.namespace)
    assert.strictEqual(Request.key(req), "node-1")
    assert.isTrue(Equal.equals(req, Request.make("node-1")))
  })

  it("requests are plain values: equal and hashed by namespace and name", () => {
    const a = Request.make("web", "default")
    const b = Request.make("web", "default")
    assert.notStrictEqual(a, b)
    assert.isTrue(Equal.equals(a, b))
    assert.strictEqual(Hash.hash(a), Hash.hash(b))
    assert.isFalse(Equal.equals(a, Request.make("web", "other")))
    assert.isFalse(Equal.equals(a, Request.make("web")))
  })

  it("fromKey splits on the first slash", () => {
    assert.deepStrictEqual({ ...Request.fromKey("default/web") }, { namespace: "default", name: "web" })
    assert.deepStrictEqual({ ...Request.fromKey("node-1") }, { namespace: undefined, name: "node-1" })
    assert.deepStrictEqual({ ...Request.fromKey("a/b/c") }, { namespace: "a", name: "b/c" })
    assert.deepStrictEqual({ ...Request.fromKey("/x") }, { namespace: undefined, name: "x" })
  })

  it("fromObject reads metadata.namespace and metadata.name", () => {
    assert.isTrue(
      Equal.equals(
        Request.fromObject({ metadata: { name: "web", namespace: "default" } }),
        Request.make("web", "default")
      )
    )
    assert.isTrue(Equal.equals(Request.fromObject({ metadata: { name: "n1" } }), Request.make("n1")))
    assert.strictEqual(Request.fromObject({}).name, "")
  })

  it.prop(
    "fromKey inverts key for namespaced requests (names may even contain '/')",
    [segment, string(12, 1)],
    ([namespace, name]) => {
      const req = Request.make(name, namespace)
      assert.isTrue(Equal.equals(Request.fromKey(Request.key(req)), req))
    }
  )

  it.prop("fromKey inverts key for cluster-scoped requests", [segment], ([name]) => {
    const req = Request.make(name)
    assert.isTrue(Equal.equals(Request.fromKey(Request.key(req)), req))
  })

  it.prop(
    "key inverts fromKey for every key not starting with '/'",
    [Arbitrary.filter(string(20), (k) => !k.startsWith("/"))],
    ([k]) => {
      assert.strictEqual(Request.key(Request.fromKey(k)), k)
    }
  )
})
