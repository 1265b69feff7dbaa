/**
 * Serving a real control plane until SIGINT/SIGTERM: `npm run apiserver -- --real` and `reconcile-envtest start`.
 * The kubeconfig goes where `npm run apiserver` writes its own (default `$TMPDIR/reconcile-apiserver-$USER/
 * kubeconfig`, mode 0600); the kubelet stand-in runs unless `--no-controllers` (which also leaves
 * kube-controller-manager out: a bare kube-apiserver on etcd).
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as KubeClient from "@reconcile/kube/KubeClient"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Envtest from "../Envtest.js"
import * as Simulators from "../Simulators.js"

/** The default kubeconfig path of the standalone servers (one per user, stable across restarts). */
export const defaultKubeconfig = (): string =>
  Path.join(Os.tmpdir(), `reconcile-apiserver-${Os.userInfo().username}`, "kubeconfig")

/**
 * Parses `argv` (without `--real`) and serves; returns an exit code when the arguments are refused (the server
 * then never starts), else `undefined` (the process runs until a signal).
 */
export const startReal = (argv: ReadonlyArray<string>, name: string): number | undefined => {
  const usage = `usage: ${name} [--kubeconfig PATH] [--no-controllers]`
  let kubeconfig: string | undefined
  let controllers = true
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--kubeconfig" || arg.startsWith("--kubeconfig=")) {
      const value = arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : argv[++i]
      if (value === undefined || value === "") {
        console.error(`invalid --kubeconfig\n${usage}`)
        return 2
      }
      kubeconfig = Path.resolve(value)
    } else if (arg === "--no-controllers") {
      controllers = false
    } else if (arg === "--help" || arg === "-h") {
      console.log(usage)
      return 0
    } else {
      const why = ["--port", "--state-dir", "--data", "--bookmark-interval"].some((f) => arg.startsWith(f))
        ? `${
          arg.split("=")[0]
        } is not supported with a real control plane (fresh ports, certificates and etcd each start)`
        : `unknown argument ${arg}`
      console.error(`${why}\n${usage}`)
      return 2
    }
  }
  const path = kubeconfig ?? defaultKubeconfig()
  const started = Date.now()
  const program = Effect.gen(function*() {
    const plane = yield* Envtest.Envtest
    yield* Console.log(
      `kube-apiserver ${plane.version} listening on ${plane.url} (etcd ${plane.etcdUrl}; started in ${
        ((Date.now() - started) / 1000).toFixed(1)
      } s)`
    )
    yield* Console.log(`kubeconfig: ${plane.kubeconfigPath} (admin, system:masters; removed on stop)`)
    yield* Console.log(
      plane.controllerManager
        ? "controllers: kube-controller-manager (garbage collector, namespaces, Deployments, ReplicaSets, Jobs, …)"
        : controllers
        ? "controllers: none (no kube-controller-manager binary in the assets folder)"
        : "controllers: off"
    )
    if (controllers) {
      yield* Console.log(
        "nodes: none; a kubelet stand-in reports Pods Running and Ready after 1 s (Job Pods Succeeded)"
      )
    }
    yield* Console.log(`binaries: ${plane.assets.dir}`)
    yield* Console.log(`try: kubectl --kubeconfig ${plane.kubeconfigPath} get namespaces`)
    return yield* Effect.never
  })
  const Plane = Envtest.layerKube({
    kubeconfigPath: path,
    controllers: controllers ? undefined : false,
    log: (line) => console.log(line)
  })
  const Live = controllers
    ? Simulators.layerKubelet().pipe(Layer.provideMerge(KubeClient.layer), Layer.provideMerge(Plane))
    : Plane
  NodeRuntime.runMain(
    program.pipe(
      Effect.provide(Live),
      Effect.catchTags({
        EnvtestError: (e) =>
          Effect.sync(() => {
            console.error(`${name}: cannot start: ${e.message}`)
            process.exitCode = 1
          }),
        KubeConfigError: (e) =>
          Effect.sync(() => {
            console.error(`${name}: cannot start: ${e.message}`)
            process.exitCode = 1
          })
      })
    )
  )
  return undefined
}
