/**
 * The local clusters of the main job: the in-memory API server (`TestApiServer`, the default) and a real control
 * plane of its own (`Envtest`, `--real`) with the kubelet stand-in. This module loads the testkit: main.ts imports
 * it dynamically, in those modes only, so a main job on a named cluster (`--kubeconfig`, `--in-cluster`) never
 * loads the in-memory server, its CEL engine or its protobuf tables.
 */
import { Envtest, Simulators, TestApiServer } from "@reconcile/testkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { clientFromFile, LocalCluster } from "./localCluster.js"
import { narrate } from "./narration.js"

/** The in-memory API server (with its controller manager), its kubeconfig at `kubeconfigPath`. */
export const embeddedCluster = (kubeconfigPath: string) =>
  Layer.effect(
    LocalCluster,
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      yield* narrate(`Embedded Kubernetes API server on ${server.url} (in memory, stops with this process)`, {
        message: "started the embedded Kubernetes API server",
        fields: { url: server.url, storage: "memory", until: "this process stops" }
      })
      return {
        url: server.url,
        kubeconfigPath: server.kubeconfigPath,
        name: "the embedded cluster",
        apply: (object, fieldManager, force) => Effect.asVoid(server.cluster.apply(object, { fieldManager, force })),
        get: (object) =>
          Effect.option(server.cluster.get({
            apiVersion: object.apiVersion,
            kind: object.kind,
            name: object.metadata.name!,
            namespace: object.metadata.namespace
          }))
      }
    })
  ).pipe(Layer.provide(TestApiServer.layerWithCluster({ port: 0, kubeconfigPath })))

/** A real control plane (`Envtest`) with the kubelet stand-in. */
export const realCluster = (kubeconfigPath: string) =>
  Layer.effect(
    LocalCluster,
    Effect.gen(function*() {
      const plane = yield* Envtest.Envtest
      yield* narrate(
        `Real Kubernetes control plane ${plane.version} on ${plane.url} (etcd, kube-apiserver, ` +
          `kube-controller-manager; stops with this process)`,
        {
          message: "started a real Kubernetes control plane",
          fields: {
            version: plane.version,
            url: plane.url,
            components: ["etcd", "kube-apiserver", "kube-controller-manager"],
            until: "this process stops"
          }
        }
      )
      yield* narrate(
        "No nodes: a kubelet stand-in reports each Pod Running and Ready after 1 s (the testkit's Simulators.kubelet)",
        { message: "no nodes: a kubelet stand-in reports each Pod Running and Ready after 1 s" }
      )
      return {
        url: plane.url,
        kubeconfigPath: plane.kubeconfigPath,
        name: "the real control plane",
        apply: (object, fieldManager, force) => Effect.asVoid(plane.apply(object, { fieldManager, force })),
        get: (object) => Effect.map(plane.get(object), Option.fromUndefinedOr)
      }
    })
  ).pipe(
    // the kubelet stand-in lives as long as the cluster (its own client, over the admin kubeconfig)
    Layer.merge(Layer.unwrap(Effect.map(Envtest.Envtest, (plane) =>
      Simulators.layerKubelet().pipe(Layer.provide(clientFromFile(plane.kubeconfigPath)))))),
    Layer.provide(Envtest.layer({ kubeconfigPath }))
  )
