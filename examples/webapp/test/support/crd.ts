import { Resource } from "@reconcile/kube"
import { WebApp } from "../../src/WebApp.js"

/**
 * A merge patch making the WebApp CRD accept any spec (its versions array is replaced), so an app can stop decoding.
 */
export const laxCrdPatch = (() => {
  const version = Resource.crdManifest(WebApp).spec.versions[0]!
  const schema = version.schema!.openAPIV3Schema!
  const spec = { type: "object", "x-kubernetes-preserve-unknown-fields": true }
  return {
    spec: {
      versions: [{
        ...version,
        schema: { openAPIV3Schema: { ...schema, properties: { ...schema.properties, spec }, required: [] } }
      }]
    }
  }
})()
