/**
 * What `npm start` shows on the embedded cluster (`src/main.ts`): the sample WebApp it applies, and the kubectl
 * lines it prints once the sample is Ready. `test/webhooks.test.ts` runs those lines with the real kubectl.
 */
import { WebApp } from "./WebApp.js"
import { deletionProtection } from "./webhooks.js"

/** The sample WebApp, in `namespace`. */
export const samples = (namespace: string) => [{
  apiVersion: WebApp.apiVersion,
  kind: WebApp.kind,
  metadata: { name: "sample", namespace },
  spec: { image: "nginx:1.27", replicas: 2, port: 8080 }
}]

/**
 * The kubectl lines printed once the sample is Ready: the operator at work, then its webhooks — a WebApp without
 * `replicas` and with an unpinned image (`Warning: spec.image: …`) gets `replicas: 1`; the sample, annotated with the
 * deletion protection, cannot be deleted until the annotation is removed. (The here-string `<<<` is bash's and zsh's.)
 */
export const tryIt = (namespace: string): ReadonlyArray<string> => {
  const hello = JSON.stringify({
    apiVersion: WebApp.apiVersion,
    kind: WebApp.kind,
    metadata: { name: "hello" },
    spec: { image: "nginx", port: 80 }
  })
  const n = `-n ${namespace}`
  return [
    `kubectl get webapps,deployments,services ${n}`,
    `kubectl patch webapp sample ${n} --type merge -p '{"spec":{"replicas":3}}'`,
    `kubectl apply ${n} -f - <<< '${hello}'   # no replicas, no tag: a Warning`,
    `kubectl get webapp hello ${n} -o jsonpath='{.spec.replicas}{"\\n"}'   # 1, from the defaulting webhook`,
    `kubectl annotate webapp sample ${n} ${deletionProtection}=true`,
    `kubectl delete webapp sample ${n}   # denied while the annotation says "true"`,
    `kubectl annotate webapp sample ${n} ${deletionProtection}-`,
    `kubectl delete webapp sample ${n}   # allowed again`
  ]
}
