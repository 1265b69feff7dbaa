/**
 * Which WebApps of a run have converged, from watch events of the three kinds (the TestApiServer's `server.ts` and
 * the real one's `realServer.ts`): `status.observedGeneration` equals the generation and its Deployment and Service
 * exist, controlled by it. A batch (`expect`: the WebApps named `<prefix>-N`) is reported once all of it converged.
 */
import type { FromServer } from "./server.js"
import { KIND } from "./shared.js"

interface Tracked {
  generation: number | undefined
  observed: number | undefined
  uid: string | undefined
  deployment: string | undefined
  service: string | undefined
  converged: boolean
}

const prefixOf = (name: string) => name.slice(0, name.lastIndexOf("-"))

/** The uid of an object's controlling WebApp. */
const controllerUid = (object: any): string | undefined =>
  object.metadata.ownerReferences?.find((r: any) => r.controller === true && r.kind === KIND)?.uid

export const makeTracker = (send: (message: FromServer) => void) => {
  const tracked = new Map<string, Tracked>()
  const targets = new Map<string, { count: number; converged: number; started: number }>()
  const entry = (name: string): Tracked => {
    let t = tracked.get(name)
    if (t === undefined) {
      t = {
        generation: undefined,
        observed: undefined,
        uid: undefined,
        deployment: undefined,
        service: undefined,
        converged: false
      }
      tracked.set(name, t)
    }
    return t
  }
  const check = (name: string, t: Tracked) => {
    const now = t.uid !== undefined && t.generation !== undefined && t.observed === t.generation &&
      t.deployment === t.uid && t.service === t.uid
    if (now && !t.converged) {
      t.converged = true
      const target = targets.get(prefixOf(name))
      if (target !== undefined && ++target.converged === target.count) {
        send({ op: "converged", prefix: prefixOf(name), millis: performance.now() - target.started })
      }
    }
  }
  return {
    /** Reports the batch `prefix` once its `count` WebApps converged, timed from `started`. */
    expect: (prefix: string, count: number, started: number) => targets.set(prefix, { count, converged: 0, started }),
    /** How many of the batch `prefix` have converged so far. */
    converged: (prefix: string) => targets.get(prefix)?.converged ?? 0,
    webApp: (o: any, deleted: boolean) => {
      const t = entry(o.metadata.name)
      t.uid = deleted ? undefined : o.metadata.uid
      t.generation = o.metadata.generation
      t.observed = o.status?.observedGeneration
      check(o.metadata.name, t)
    },
    deployment: (o: any, deleted: boolean) => {
      const t = entry(o.metadata.name)
      t.deployment = deleted ? undefined : controllerUid(o)
      check(o.metadata.name, t)
    },
    service: (o: any, deleted: boolean) => {
      const t = entry(o.metadata.name)
      t.service = deleted ? undefined : controllerUid(o)
      check(o.metadata.name, t)
    }
  }
}
