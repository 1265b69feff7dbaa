import { selfSigned } from "@reconcile/kube/Certificates"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as YAML from "yaml"
import * as TestApiServer from "../TestApiServer.js"
import * as TestCluster from "../TestCluster.js"
import * as ControllerManager from "./controllerManager.js"
import * as Server from "./http/server.js"
import { checkCertificate, checkToken, loadOrCreate, savePort, type ServerState } from "./serverState.js"
import { coreOf } from "./testCluster.js"

export const kubeconfigYaml = (url: string, token: string, ca: string): string =>
  YAML.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{
      name: "testkit",
      cluster: { server: url, "certificate-authority-data": Buffer.from(ca, "utf8").toString("base64") }
    }],
    users: [{ name: "testkit", user: { token } }],
    contexts: [{ name: "testkit", context: { cluster: "testkit", user: "testkit", namespace: "default" } }],
    "current-context": "testkit",
    preferences: {}
  })

export const make = (
  options: TestApiServer.Options = {}
): Effect.Effect<
  TestApiServer.TestApiServer.Service,
  TestApiServer.TestApiServerError,
  TestCluster.TestCluster | Scope.Scope
> =>
  Effect.gen(function*() {
    const cluster = yield* TestCluster.TestCluster
    const core = coreOf(cluster)
    yield* Effect.try({
      try: () => {
        if (options.tls !== undefined) checkCertificate(options.tls, "tls.cert", "tls.key")
        if (options.token !== undefined) checkToken(options.token, "token")
      },
      catch: (cause) => new TestApiServer.TestApiServerError({ reason: "InvalidOptions", cause })
    })
    const stateDir = options.stateDir
    const state: ServerState | undefined = stateDir === undefined ? undefined : yield* Effect.tryPromise({
      try: () => loadOrCreate(stateDir),
      catch: (cause) => new TestApiServer.TestApiServerError({ reason: "StateFailed", cause })
    })
    const token = options.token ?? state?.token ?? randomBytes(24).toString("hex")
    const tls = options.tls ?? state?.tls ?? selfSigned()
    const listen = (port: number) =>
      Effect.tryPromise({
        try: () =>
          Server.start(core, {
            port,
            tls,
            token,
            bookmarkIntervalMs: Duration.toMillis(Duration.fromInputUnsafe(options.bookmarkInterval ?? "1 minute")),
            resourceVersionWaitMs: options.resourceVersionWait === undefined
              ? undefined
              : Duration.toMillis(Duration.fromInputUnsafe(options.resourceVersionWait)),
            log: options.log
          }),
        catch: (cause) => new TestApiServer.TestApiServerError({ reason: "ListenFailed", cause })
      })
    const recorded = options.port === undefined ? state?.port : undefined
    const running = yield* Effect.acquireRelease(
      recorded === undefined ? listen(options.port ?? 0) : listen(recorded).pipe(
        // The recorded port is taken: a free one (clients then need the new kubeconfig).
        Effect.catchIf((e) => (e.cause as NodeJS.ErrnoException | undefined)?.code === "EADDRINUSE", () => listen(0))
      ),
      (server) => Effect.promise(() => server.close())
    )
    if (state?.changed === "renewed") {
      options.log?.(`the certificate in ${stateDir} had expired: a new one is used (clients need the new kubeconfig)`)
    }
    if (recorded !== undefined && running.port !== recorded) {
      options.log?.(`port ${recorded} is taken: listening on ${running.port} (clients need the new kubeconfig)`)
    }
    if (stateDir !== undefined && running.port !== state?.port) {
      yield* Effect.tryPromise({
        try: () => savePort(stateDir, running.port),
        catch: (cause) => new TestApiServer.TestApiServerError({ reason: "StateFailed", cause })
      })
    }
    if (options.controllers !== false) {
      yield* ControllerManager.run(core, options.controllers === true ? {} : options.controllers)
    }
    const url = `https://127.0.0.1:${running.port}`
    const kubeconfig = kubeconfigYaml(url, token, tls.cert)
    const kubeconfigPath = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          if (options.kubeconfigPath !== undefined) {
            await Fs.mkdir(Path.dirname(options.kubeconfigPath), { recursive: true })
            await Fs.writeFile(options.kubeconfigPath, kubeconfig, { mode: 0o600 })
            return { path: options.kubeconfigPath, tempDir: undefined }
          }
          const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "reconcile-testkit-"))
          const path = Path.join(dir, "kubeconfig")
          await Fs.writeFile(path, kubeconfig, { mode: 0o600 })
          return { path, tempDir: dir }
        },
        catch: (cause) => new TestApiServer.TestApiServerError({ reason: "KubeconfigFailed", cause })
      }),
      ({ tempDir }) =>
        tempDir === undefined ? Effect.void : Effect.promise(() => Fs.rm(tempDir, { recursive: true, force: true }))
    )
    return {
      url,
      port: running.port,
      token,
      certificateAuthority: tls.cert,
      kubeconfigPath: kubeconfigPath.path,
      kubeconfig,
      cluster
    }
  })
