/**
 * The Manager controllers run under in tests: no endpoint, and this replica always leads.
 */
import { LeaderElection, Manager } from "@reconcile/core"
import { Layer } from "effect"

export const TestManager = Manager.layer().pipe(Layer.provide(LeaderElection.layerAlwaysLeader), Layer.orDie)
