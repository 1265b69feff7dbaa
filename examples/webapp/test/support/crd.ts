import { Resource } from "@reconcile/kube"
import { WebApp } from "../../src/WebApp.js"

/**
 * A merge patch making the WebApp CRD accept any spec (its versions array is replaced), so an app can stop decoding.
 * The `/scale` subresource goes too: kube-apiserver checks a scale subresource's `.spec.replicas` on every write
 * (an integer, whatever the schema says), so with it a spec with `replicas: "three"` could not be stored at all.
 */
export const laxCrdPatch = (() => {
  const { subresources, ...version } = Resource.crdManifest(WebApp).spec.versions[0]!
  const schema = version.schema!.openAPIV3Schema!
  const spec = { type: "object", "x-kubernetes-preserve-unknown-fields": true }
  return {
    spec: {
      versions: [{
        ...version,
        ...(subresources?.status !== undefined ? { subresources: { status: subresources.status } } : {}),
        schema: { openAPIV3Schema: { ...schema, properties: { ...schema.properties, spec }, required: [] } }
      }]
    }
  }
})()
