/**
 * The WebApp's conversion webhook (`src/conversion.ts`), in process: `WebhookChecks.conversionRoundTrips` (v1 →
 * v1alpha1 → v1 and v1alpha1 → v1 → v1alpha1 are the identity) over WebApps drawn from the Schemas and over image
 * references as people write them (a registry with a port, a path, a tag or none, a digest, a tag and a digest); what
 * each reference is in v1alpha1; the v1alpha1 images the webhook refuses, and why. Through the API server:
 * `smoke.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import { WebhookChecks } from "@reconcile/testkit"
import { Arbitrary, Result, Schema } from "effect"
import { conversion } from "../src/conversion.js"
import { joinImage, splitImage, WebApp, WebAppV1alpha1 } from "../src/WebApp.js"

type Json = Record<string, any>

/** Image references as people write them: `[registry[:port]/][org/]name[:tag][@sha256:digest]`. */
const images = Arbitrary.schema(Schema.String.check(Schema.isPattern(
  new RegExp(
    "^(?:(?:registry|localhost|ghcr\\.io)(?::5000)?/)?(?:org/)?(?:nginx|app)" + // registry, port, path
      "(?::(?:1\\.27|latest|v2|1\\.2|x_1-rc\\.0))?" + // tag
      "(?:@sha256:[0-9a-f]{8})?$" // digest
  )
)))

/** v1 WebApps (drawn from the Schemas) with such an image. */
const hubObjects = Arbitrary.map(
  Arbitrary.all([WebhookChecks.objects(WebApp), images]),
  ([o, image]) => ({ ...o, spec: { ...(o.spec as object), image } })
)

/** v1alpha1 WebApps (drawn from the Schemas) with such an image, as a v1alpha1 client writes it. */
const spokeObjects = Arbitrary.map(
  Arbitrary.all([WebhookChecks.objects(WebAppV1alpha1), images]),
  ([o, image]) => ({ ...o, spec: { ...(o.spec as object), image: splitImage(image) } })
)

const webApp = (apiVersion: string, spec: Json) => ({
  apiVersion,
  kind: WebApp.kind,
  metadata: { name: "web", namespace: "default" },
  spec
})

const convert = (object: unknown, apiVersion: string): Json => {
  const result = conversion.convert(object, apiVersion)
  if (Result.isFailure(result)) return assert.fail(result.failure.message)
  return JSON.parse(JSON.stringify(result.success))
}

describe("the conversion (WebhookChecks)", () => {
  it.effect("v1 and v1alpha1 convert both ways and back, for WebApps drawn from the Schemas", () =>
    WebhookChecks.conversionRoundTrips(conversion, { resources: [WebAppV1alpha1], runs: 300 }))

  it.effect("… and for image references as people write them: registry ports, no tag, digests", () =>
    WebhookChecks.conversionRoundTrips(conversion, {
      arbitraries: { [WebApp.version]: hubObjects, [WebAppV1alpha1.version]: spokeObjects },
      runs: 300
    }))

  it.prop(
    "v1alpha1 says everything v1 says: no WebApp needs the conversion's annotation",
    [WebhookChecks.objects(WebApp), hubObjects],
    (drawn) => {
      for (const hub of drawn) {
        const alpha = convert(hub, WebAppV1alpha1.apiVersion)
        assert.isUndefined(alpha.metadata.annotations?.[conversion.annotation], JSON.stringify(alpha))
      }
    },
    { arbitrary: { runs: 200 } }
  )
})

describe("the image in v1alpha1", () => {
  it("a tag is what follows the last ':' after the last '/'; a digest stays whole in repository; no tag, none", () => {
    const cases: ReadonlyArray<readonly [string, Json]> = [
      ["nginx", { repository: "nginx" }],
      ["nginx:1.27", { repository: "nginx", tag: "1.27" }],
      ["registry:5000/app:1.2", { repository: "registry:5000/app", tag: "1.2" }],
      ["registry:5000/app", { repository: "registry:5000/app" }],
      ["ghcr.io/org/app:latest", { repository: "ghcr.io/org/app", tag: "latest" }],
      ["nginx@sha256:0123abcd", { repository: "nginx@sha256:0123abcd" }],
      ["registry:5000/app:1.2@sha256:0123abcd", { repository: "registry:5000/app:1.2@sha256:0123abcd" }],
      // not a tag by Docker's grammar: the repository alone, still lossless
      ["nginx:", { repository: "nginx:" }],
      ["", { repository: "" }]
    ]
    for (const [image, parts] of cases) {
      assert.deepStrictEqual(splitImage(image), parts, image)
      assert.strictEqual(joinImage(splitImage(image)), image, image)
      const alpha = convert(webApp(WebApp.apiVersion, { image, replicas: 2, port: 80 }), WebAppV1alpha1.apiVersion)
      assert.deepStrictEqual(alpha.spec, { image: parts, instances: 2, port: 80 }, image)
      assert.isUndefined(alpha.metadata.annotations, image)
    }
  })

  it("a v1alpha1 WebApp is a v1 one with the image joined and instances as replicas; without instances, none", () => {
    const alpha = webApp(WebAppV1alpha1.apiVersion, {
      image: { repository: "registry:5000/app", tag: "1.2" },
      instances: 3,
      port: 8080
    })
    const hub = convert(alpha, WebApp.apiVersion)
    assert.deepStrictEqual(hub, {
      ...alpha,
      apiVersion: WebApp.apiVersion,
      spec: { image: "registry:5000/app:1.2", replicas: 3, port: 8080 }
    })
    assert.deepStrictEqual(convert(hub, WebAppV1alpha1.apiVersion), alpha)
    const bare = convert(
      webApp(WebAppV1alpha1.apiVersion, { image: { repository: "nginx" }, port: 80 }),
      "apps.reconcile.dev/v1"
    )
    assert.deepStrictEqual(bare.spec, { image: "nginx", port: 80 }, "the defaulting webhook (on v1) sets replicas")
  })

  it("refuses a v1alpha1 image that would read back otherwise, saying why", () => {
    const refused = (image: Json) => {
      const result = conversion.convert(webApp(WebAppV1alpha1.apiVersion, { image, port: 80 }), WebApp.apiVersion)
      assert(Result.isFailure(result), JSON.stringify(image))
      return result.failure.message
    }
    assert.include(
      refused({ repository: "nginx:1.27" }),
      `spec: image: the repository "nginx:1.27" ends in a tag: give it as tag`
    )
    assert.include(
      refused({ repository: "nginx@sha256:0123abcd", tag: "1.27" }),
      `spec: image: a repository with a digest ("nginx@sha256:0123abcd") takes no tag`
    )
    assert.include(refused({ repository: "nginx", tag: "a/b" }), "spec: image.tag: Expected a string matching")
  })
})
