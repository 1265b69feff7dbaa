/**
 * The harness around the README's "A controller in one screen" in the packaging check (`npm run test:pack`):
 * copied into the fresh project next to `greeting.ts` (the snippet's definitions) and compiled there.
 * Talks to the API server named by `KUBECONFIG`, with the same calls as the README's test:
 * - `setup`: installs the snippet's CRD;
 * - `check`: creates a Greeting, waits until the controller (the snippet, running as its own process) has
 *   applied its ConfigMap, then reads the Manager's `/healthz` and `/metrics` on the snippet's port.
 */
import { Kube, KubeClient, Resource } from "@reconcile/kube"
import { Effect, Layer } from "effect"
import { Greeting } from "./greeting.js"

const client = KubeClient.layer.pipe(Layer.provide(Kube.layerFromDefault()))
const run = <A, E>(effect: Effect.Effect<A, E, KubeClient.KubeClient>): Promise<A> =>
  Effect.runPromise(Effect.provide(effect, client))

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Retries `attempt` every 200 ms until it returns a value or `seconds` have passed. */
const eventually = async <A>(what: string, seconds: number, attempt: () => Promise<A | undefined>): Promise<A> => {
  const deadline = Date.now() + seconds * 1000
  let last: unknown = "no answer"
  while (Date.now() < deadline) {
    try {
      const result = await attempt()
      if (result !== undefined) return result
    } catch (error) {
      last = error
    }
    await sleep(200)
  }
  throw new Error(`${what}: not within ${seconds} s (last: ${String(last)})`)
}

const setup = async () => {
  const crd = Resource.crdManifest(Greeting)
  const name = crd.metadata?.name ?? "greetings.example.com"
  await run(
    KubeClient.patch(Resource.CustomResourceDefinition, name, crd, { type: "apply", fieldManager: "test-pack" })
  )
  console.log(`harness: CRD ${name} applied`)
}

const check = async (port: number) => {
  await eventually("create the Greeting default/hello", 20, () =>
    run(KubeClient.create(Greeting, {
      apiVersion: Greeting.apiVersion,
      kind: Greeting.kind,
      metadata: { name: "hello", namespace: "default" },
      spec: { message: "hi" }
    })))
  console.log("harness: Greeting default/hello created")
  const message = await eventually("the controller applies ConfigMap default/hello", 30, async () => {
    const cm = await run(KubeClient.get(Resource.ConfigMap, "hello", { namespace: "default" }))
    return cm.data?.message
  })
  if (message !== "hi") throw new Error(`ConfigMap default/hello has message ${JSON.stringify(message)}, not "hi"`)
  console.log(`harness: ConfigMap default/hello has message "${message}"`)
  const healthz = await fetch(`http://127.0.0.1:${port}/healthz`)
  if (healthz.status !== 200) throw new Error(`GET /healthz: ${healthz.status}`)
  const metrics = await eventually("a reconcile metric of the greeter controller on /metrics", 10, async () => {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    return /controller="greeter"/.test(text) ? text : undefined
  })
  console.log(
    `harness: /healthz 200, /metrics has ${
      metrics.split("\n").filter((l) => l.includes("greeter")).length
    } lines of the greeter controller`
  )
}

const [mode, port] = process.argv.slice(2)
const main = mode === "setup"
  ? setup()
  : mode === "check"
  ? check(Number(port))
  : Promise.reject(new Error(`usage: harness setup|check PORT`))
main.catch((error: unknown) => {
  console.error(`harness ${mode}: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})
