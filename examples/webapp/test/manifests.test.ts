import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { parse } from "yaml"
import { clusterRole, crd, files } from "../src/manifests.js"

describe("config/", () => {
  it("the committed manifests are what the Schemas generate (run `npm run generate -w examples/webapp`)", () => {
    for (const [name, text] of Object.entries(files())) {
      assert.strictEqual(fs.readFileSync(path.join(import.meta.dirname, "..", "config", name), "utf8"), text, name)
    }
  })

  it("the CRD declares the status subresource and the spec fields", () => {
    const manifest = parse(files()["crd.yaml"]!)
    assert.deepStrictEqual(manifest, JSON.parse(JSON.stringify(crd())))
    const version = manifest.spec.versions[0]
    assert.deepStrictEqual(version.subresources, { status: {} })
    assert.deepStrictEqual(Object.keys(version.schema.openAPIV3Schema.properties.spec.properties).sort(), [
      "image",
      "port",
      "replicas"
    ])
  })

  it("the ClusterRole grants no wildcard and no delete", () => {
    for (const rule of clusterRole().rules) {
      assert.notInclude(rule.verbs, "*")
      assert.notInclude(rule.verbs, "delete")
      assert.notInclude(rule.resources, "*")
    }
  })
})
