/**
 * The intended state: acknowledged writes are certain; a write without an answer leaves the app between its
 * states before and after, and settling adopts whichever the server holds — anything else is a violation.
 */
import { describe, expect, it } from "vitest"
import type { Answer, Direct, RequestOptions } from "../Direct.js"
import { NoAnswer } from "../Direct.js"
import { Load } from "../Load.js"

/** A stand-in for the direct connection: answers from `respond`, and records every request. */
const stub = (respond: (method: string, path: string, options: RequestOptions) => Answer | "no answer") => {
  const requests: Array<string> = []
  const direct = {
    request: async (method: string, path: string, options: RequestOptions = {}) => {
      requests.push(`${method} ${path}`)
      const answer = respond(method, path, options)
      if (answer === "no answer") throw new NoAnswer(method, path, "timeout")
      return answer
    }
  } as unknown as Direct
  return { direct, requests }
}

const created = { status: 201, body: {} }
const ok = { status: 200, body: {} }

const object = (name: string, spec: unknown, deleting = false) => ({
  metadata: { name, ...(deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}) },
  spec
})

describe("Load", () => {
  it("makes acknowledged creates and edits the intended state", async () => {
    const { direct } = stub((method) => method === "POST" ? created : ok)
    const load = new Load(direct, "default", undefined, { cap: 40, floor: 0 })
    await load.populate(2)
    await load.run({ at: 0, op: "edit", pick: 0, variant: 5 })
    const wanted = load.wanted()
    expect([...wanted.keys()]).toEqual(["app-0", "app-1"])
    expect(wanted.get("app-0")).toEqual({ image: "registry.example/chaos/app-0:w3", replicas: 2, port: 8001 })
    expect(await load.settle(new Map([...wanted].map(([n, spec]) => [n, object(n, spec)])))).toEqual([])
  })

  it("adopts either state of an unanswered write, and names a state no write explains", async () => {
    let answer: "ok" | "none" = "ok"
    const { direct } = stub((method) => answer === "none" ? "no answer" : method === "POST" ? created : ok)
    const load = new Load(direct, "default", undefined, { cap: 40, floor: 0 })
    await load.populate(1)
    const before = load.wanted().get("app-0")!
    answer = "none"
    await load.run({ at: 0, op: "edit", pick: 0, variant: 9 })
    expect(load.stats.unanswered).toBe(1)
    // uncertain: not in the wanted set until settled
    expect(load.wanted().size).toBe(0)
    expect(await load.settle(new Map([["app-0", object("app-0", before)]]))).toEqual([])
    expect(load.wanted().get("app-0")).toEqual(before)

    answer = "none"
    await load.run({ at: 0, op: "delete", pick: 0, variant: 0 })
    const problems = await load.settle(new Map([["app-0", object("app-0", { image: "x", replicas: 1, port: 1 })]]))
    expect(problems.length).toBe(1)
    expect(problems[0]).toMatch(/app-0: the server has it present .* the harness wrote present .* or absent/)
  })

  it("counts an object being deleted as absent", async () => {
    const { direct } = stub((method) => method === "POST" ? created : method === "DELETE" ? ok : ok)
    const load = new Load(direct, "default", undefined, { cap: 40, floor: 0 })
    await load.populate(1)
    const spec = load.wanted().get("app-0")
    await load.run({ at: 0, op: "delete", pick: 0, variant: 0 })
    expect(await load.settle(new Map([["app-0", object("app-0", spec, true)]]))).toEqual([])
    expect(load.wanted().size).toBe(0)
  })

  it("reports an acknowledged app that answers 404 (a lost write), and an app it never created", async () => {
    const { direct } = stub((method) => method === "POST" ? created : { status: 404, body: {} })
    const load = new Load(direct, "default", undefined, { cap: 40, floor: 0 })
    await load.populate(1)
    await load.run({ at: 0, op: "edit", pick: 0, variant: 1 })
    const problems = await load.settle(new Map([["stranger", object("stranger", {})]]))
    expect(problems).toContain("acknowledged WebApp app-0 answered 404 to an edit (a lost write)")
    expect(problems).toContain("WebApp stranger exists but the harness never created it")
  })

  it("deletes a poisoned app again when its delete may not have landed", async () => {
    let deletes = "none" as "none" | "ok"
    const { direct, requests } = stub((method) =>
      method === "POST" ? created : method === "DELETE" ? (deletes === "ok" ? ok : "no answer") : ok
    )
    const load = new Load(direct, "default", undefined, { cap: 40, floor: 0 })
    await load.populate(1)
    await load.run({ at: 0, op: "poison-delete", pick: 0, variant: 0 })
    deletes = "ok"
    expect(await load.settle(new Map([["app-0", object("app-0", { replicas: "three" })]]))).toEqual([])
    expect(requests.filter((r) => r.startsWith("DELETE")).length).toBe(2)
    expect(load.wanted().size).toBe(0)
  })

  it("edits then deletes one app; replaces an app by a new object of the same name", async () => {
    let creates = 0
    const { direct, requests } = stub((method) => {
      if (method !== "POST") return ok
      // the second create of app-0 is refused once: the old object still terminates
      creates++
      return creates === 3 ? { status: 409, body: {} } : created
    })
    const load = new Load(direct, "default", undefined, { cap: 40, floor: 0 })
    await load.populate(2)
    await load.run({ at: 0, op: "edit-delete", pick: 0, variant: 0 })
    expect(requests.slice(-2).map((r) => r.split(" ")[0])).toEqual(["PATCH", "DELETE"])
    expect([...load.wanted().keys()]).toEqual(["app-1"])
    await load.run({ at: 0, op: "replace", pick: 0, variant: 0 })
    expect(requests.slice(-3).map((r) => r.split(" ")[0])).toEqual(["DELETE", "POST", "POST"])
    expect(load.stats.rejected).toBe(1)
    expect(load.intents.get("app-1")?.incarnations).toBe(2)
    expect([...load.wanted().keys()]).toEqual(["app-1"])
  })

  it("keeps the population between its floor and its cap", async () => {
    const { direct } = stub((method) => method === "POST" ? created : ok)
    const load = new Load(direct, "default", undefined, { cap: 3, floor: 2 })
    await load.populate(2)
    await load.run({ at: 0, op: "delete", pick: 0, variant: 0 })
    expect(load.stats.ops.create).toBe(3)
    await load.run({ at: 0, op: "create", pick: 0, variant: 0 })
    expect(load.stats.ops.edit).toBe(1)
    expect(load.wanted().size).toBe(3)
  })

  it("recreates a deleted name as a new object", async () => {
    const { direct } = stub((method) => method === "POST" ? created : ok)
    const load = new Load(direct, "default", undefined, { cap: 40, floor: 0 })
    await load.populate(1)
    await load.run({ at: 0, op: "delete", pick: 0, variant: 0 })
    await load.run({ at: 0, op: "recreate", pick: 0, variant: 3 })
    expect(load.intents.get("app-0")?.incarnations).toBe(2)
    expect(load.wanted().has("app-0")).toBe(true)
  })
})
