import { KubeConfig } from "@kubernetes/client-node"
import * as Kube from "@reconcile/kube/Kube"
import * as KubeClient from "@reconcile/kube/KubeClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { TestCluster } from "../TestCluster.js"
import type * as TestKube from "../TestKube.js"
import { makeHandler } from "./http/server.js"
import * as InProcess from "./inProcess.js"
import { coreOf } from "./testCluster.js"

/** The base URL of in-process requests: never resolved, named in diagnoses and the rest-client metrics. */
const server = "https://testkube.in-process"

const kubeConfigFor = (namespace: string): KubeConfig => {
  const kc = new KubeConfig()
  kc.loadFromOptions({
    clusters: [{ name: "testkube", server, skipTLSVerify: false }],
    users: [{ name: "testkube" }],
    contexts: [{ name: "testkube", cluster: "testkube", user: "testkube", namespace }],
    currentContext: "testkube"
  })
  return kc
}

/** @internal */
export const makeKube = (options: TestKube.Options = {}): Effect.Effect<Kube.Kube.Service, never, TestCluster> =>
  Effect.flatMap(TestCluster, (cluster) => {
    const core = coreOf(cluster)
    if (core === undefined) {
      return Effect.die(new Error("TestKube needs a TestCluster made by TestCluster.make (or its layers)"))
    }
    const namespace = options.namespace ?? "default"
    const handler = makeHandler(core, {
      token: undefined,
      bookmarkIntervalMs: Duration.toMillis(Duration.fromInputUnsafe(options.bookmarkInterval ?? "1 minute")),
      log: undefined
    })
    return Kube.fromHttpClient({
      httpClient: HttpClient.mapRequest(InProcess.httpClient(handler), HttpClientRequest.prependUrl(server)),
      kubeConfig: kubeConfigFor(namespace),
      server,
      namespace,
      // diagnoses name no server: it has no address a person could use
      names: {}
    }, {
      retry: options.retry,
      timeout: options.timeout,
      // the server names the field manager of a write without one after the User-Agent's product, as upstream
      userAgent: `${options.fieldManager ?? "reconcile"}/0.1.0`
    })
  })

/** @internal */
export const make = (options?: TestKube.Options): Effect.Effect<KubeClient.KubeClient.Service, never, TestCluster> =>
  Effect.flatMap(makeKube(options), (kube) => Effect.provideService(KubeClient.make, Kube.Kube, kube))
