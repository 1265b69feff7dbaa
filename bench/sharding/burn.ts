/**
 * The CPU a reconcile of the sharding benchmark burns: a fixed number of rounds of an integer hash (FNV-1a seeded
 * with an object's name), its result kept so that no compiler can drop the loop. The driver calibrates the rounds to
 * `BENCH_SHARDING_BURN_MS` once and gives every replica the same number.
 */
let sink = 0

/** FNV-1a of `name`, then `rounds` more rounds over the round's number: the same work for any name. */
export const burn = (name: string, rounds: number): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193)
  for (let i = 0; i < rounds; i++) h = Math.imul(h ^ (i & 0xff), 0x01000193)
  sink ^= h
  return h
}

/** What the burns computed so far. */
export const burned = (): number => sink
