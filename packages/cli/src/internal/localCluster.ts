/**
 * The cluster `npm start` runs on when no cluster is named, as a service: its implementations
 * (`localClusterLive.ts`) load the testkit, which main.ts imports dynamically, only in those modes.
 */
import { Kube, KubeClient } from "@reconcile/kube"
import type { KubeObject as KubeObjects } from "@reconcile/testkit"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"

type KubeObject = KubeObjects.KubeObject

/**
 * The cluster `npm start` runs on when no cluster is named: the in-memory API server (`Embedded`), or a real
 * control plane of its own (`--real`). Samples are applied and read through it.
 */
export class LocalCluster extends Context.Service<LocalCluster, {
  readonly url: string
  readonly kubeconfigPath: string
  /** "the embedded cluster" / "the real control plane", for the texts. */
  readonly name: string
  readonly apply: (object: KubeObject, fieldManager: string, force?: boolean) => Effect.Effect<void, unknown>
  readonly get: (object: KubeObject) => Effect.Effect<Option.Option<KubeObject>, unknown>
}>()("@reconcile/cli/LocalCluster") {}

/** `KubeClient` (and `Kube`) over a kubeconfig file. */
export const clientFromFile = (kubeconfig: string) =>
  KubeClient.layer.pipe(Layer.provideMerge(Kube.layerFromFile(kubeconfig)))
