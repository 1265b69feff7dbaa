/**
 * The WebApp's conversion webhook (`docs/conversion.md`): `v1` is the hub (the storage version), `v1alpha1` a spoke
 * that converts to and from it — `image` as one reference or as `{ repository, tag }` (`splitImage`, `joinImage`),
 * `replicas` as `instances`; `port` and the status are the same in both.
 *
 * kube-apiserver calls it for every write of a `v1alpha1` WebApp (stored as `v1`) and every read, list item and watch
 * event in `v1alpha1`; the admission webhooks, registered for `v1` with `matchPolicy: Equivalent`, see a `v1alpha1`
 * write converted to `v1` (so a WebApp created as `v1alpha1` without `instances` gets `replicas: 1`, read back as
 * `instances: 1`). The functions are pure and lossless: `v1alpha1` says everything `v1` says, so no object needs the
 * conversion's annotation (`WebhookChecks.conversionRoundTrips` in `test/conversion.test.ts` checks both ways).
 * The operator carries it (`operator.ts`): the main job serves it on every replica and, on the embedded cluster
 * (`npm start`), adds the CRD's conversion stanza pointing at it; `reconcile manifests` writes the stanza for a real
 * one (`config/crd.yaml`).
 */
import { Conversion } from "@reconcile/kube"
import { joinImage, splitImage, WebApp, WebAppV1alpha1 } from "./WebApp.js"

/** The conversion webhook of the WebApp: `v1alpha1` to and from `v1`. */
export const conversion = Conversion.webhook({
  hub: WebApp,
  spokes: [{
    resource: WebAppV1alpha1,
    toHub: (app) => ({
      spec: { image: joinImage(app.spec.image), replicas: app.spec.instances, port: app.spec.port },
      status: app.status
    }),
    fromHub: (app) => ({
      spec: { image: splitImage(app.spec.image), instances: app.spec.replicas, port: app.spec.port },
      status: app.status
    })
  }]
})
