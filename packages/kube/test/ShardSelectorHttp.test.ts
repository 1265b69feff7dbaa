/**
 * `shardSelector` on list and watch, on both clusters with the `ShardedListAndWatch` feature gate (the embedded
 * cluster's `featureGates`, kube-apiserver's `--feature-gates`): the same objects selected — by the 64-bit FNV-1a
 * hash of their uid, which `shardBuckets.ts` computes as the server does —, the same `metadata.shardInfo`, the same
 * refusals. What the sharding runtime relies on when the server selects shards.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import * as buckets from "../src/internal/shardBuckets.js"
import * as Kube from "../src/Kube.js"
import * as KubeClient from "../src/KubeClient.js"
import type * as KubeError from "../src/KubeError.js"
import * as MetadataOnly from "../src/MetadataOnly.js"
import * as Resource from "../src/Resource.js"
import { freshNamespace, kubeLayer, makeEnv } from "./support/env.js"

const env = makeEnv({ shardedListAndWatch: true })
const TestLayer = KubeClient.layer.pipe(Layer.provideMerge(kubeLayer()), Layer.provideMerge(env.layer))

describe("shardSelector (ShardedListAndWatch on, both clusters)", () => {
  it.live(
    "lists and watches select by the uid's hash, answer shardInfo, and refuse bad selectors alike",
    () =>
      Effect.gen(function*() {
        const client = yield* KubeClient.KubeClient
        const namespace = yield* freshNamespace("shards")
        const uids = new Map<string, string>()
        for (let i = 0; i < 40; i++) {
          const cm = yield* client.create(Resource.ConfigMap, { metadata: { name: `c${i}`, namespace } })
          uids.set(cm.metadata!.name!, cm.metadata!.uid!)
        }
        const low = new Set(Array.from({ length: 128 }, (_, b) => b))
        const selector = buckets.selectorOf(low)
        const expected = [...uids].filter(([, uid]) => low.has(buckets.bucketOf(uid))).map(([name]) => name)
        assert.isAbove(expected.length, 5)
        assert.isBelow(expected.length, 35)
        const list = yield* client.list(Resource.ConfigMap, { namespace, shardSelector: selector })
        assert.sameMembers(list.items.map((o) => o.metadata!.name!), expected, "the objects of the range")
        assert.strictEqual(list.shardSelector, selector, "metadata.shardInfo.selector echoes it")
        // a metadata-only list is selected the same, but kube-apiserver 1.36 leaves shardInfo out of it
        const partial = yield* client.list(MetadataOnly.make(Resource.ConfigMap), {
          namespace,
          shardSelector: selector
        })
        assert.sameMembers(partial.items.map((o) => o.metadata.name!), expected)
        assert.isUndefined(partial.shardSelector)
        const odd = new Set(Array.from({ length: 128 }, (_, b) => 2 * b + 1))
        const paged = yield* client.listAll(Resource.ConfigMap, {
          namespace,
          shardSelector: buckets.selectorOf(odd),
          limit: 3
        })
        assert.sameMembers(
          paged.items.map((o) => o.metadata!.name!),
          [...uids].filter(([, uid]) => odd.has(buckets.bucketOf(uid))).map(([name]) => name)
        )
        const from = list.resourceVersion
        for (let i = 0; i < 40; i++) {
          yield* client.patch(Resource.ConfigMap, `c${i}`, { data: { v: "2" } }, { type: "merge", namespace })
        }
        const seen = yield* client.watch(Resource.ConfigMap, {
          namespace,
          shardSelector: selector,
          resourceVersion: from
        })
          .pipe(
            Stream.filter((e) => e._tag === "Modified"),
            Stream.take(expected.length),
            Stream.runCollect,
            Effect.timeout("20 seconds")
          )
        assert.sameMembers(seen.map((e) => e._tag === "Modified" ? e.object.metadata!.name! : ""), expected)
        // kube-apiserver 1.36 answers them 500, without a reason (a client retries those: asked once, raw, here)
        const kube = yield* Kube.Kube
        const refused = (shardSelector: string) =>
          Effect.flip(
            kube.request({
              method: "GET",
              path: `/api/v1/namespaces/${namespace}/configmaps`,
              query: { shardSelector }
            })
          )
        const short = (yield* refused("shardRange(object.metadata.uid, '0x8', '0x9')")) as KubeError.KubeError
        assert.strictEqual(short._tag, "ServerError")
        assert.strictEqual((short as KubeError.ServerError).status.code, 500)
        assert.isUndefined((short as KubeError.ServerError).status.reason)
        assert.include(short.message, "invalid shard selector: hexStart must be a 0x-prefixed 16-digit hex value")
        const field = yield* refused("shardRange(object.metadata.name, '0x0000000000000000', '0x1000000000000000')")
        assert.include(field.message, "unsupported field path \"object.metadata.name\"")
        const backwards = yield* refused("shardRange(object.metadata.uid, '0x2000000000000000', '0x1000000000000000')")
        assert.include(backwards.message, "must be less than end")
      }).pipe(Effect.provide(TestLayer), Effect.scoped),
    60_000
  )
})
