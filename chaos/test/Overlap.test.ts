/**
 * The overlap check over synthetic replica logs: two replicas reconciling one object at once are found (also when
 * one was killed mid-reconcile); intervals that only touch at a millisecond, of one process, of other objects, or
 * that did no work (the gate's release or no-op) are not.
 */
import { describe, expect, it } from "vitest"
import type { ProcessLog } from "../Overlap.js"
import * as Overlap from "../Overlap.js"

const at = (ms: number) => new Date(Date.UTC(2026, 11, 5, 3, 0, 0, ms)).toISOString()

/** One logfmt line as chaos/operator.ts writes it (Logging.logger). */
const line = (ms: number, msg: string, id: string, name = "app-1", replica = "r") =>
  `time=${at(ms)} level=${msg === "reconcile" ? "info" : "debug"} msg="${msg}" controller=webapp ` +
  `namespace=default name=${name} reconcileID=${id} replica=${replica}`

/** A whole reconcile that did work: started, the operator's outcome line, successful. */
const work = (from: number, to: number, id: string, name = "app-1", replica = "r") => [
  line(from, "Reconcile started", id, name, replica),
  line(to, "reconcile", id, name, replica),
  line(to, "Reconcile successful", id, name, replica)
]

const log = (process: string, lines: ReadonlyArray<string>, endedAt?: number): ProcessLog => ({
  process,
  identity: process,
  text: [`time=${at(0)} level=info msg="joining the ring" ring=webapp`, ...lines, ""].join("\n"),
  endedAt: endedAt === undefined ? undefined : Date.parse(at(endedAt))
})

describe("Overlap.check", () => {
  it("finds two replicas reconciling one object at once", () => {
    const found = Overlap.check([
      log("operator-0.1", work(100, 300, "a1")),
      log("operator-1.1", work(250, 400, "b1"))
    ])
    expect(found.intervals).toHaveLength(2)
    expect(found.overlaps).toHaveLength(1)
    const [o] = found.overlaps
    expect(o!.object).toBe("default/app-1")
    expect(o!.ms).toBe(50)
    expect(Overlap.describe(o!)).toMatch(/50 ms: operator-0\.1 .* reconcileID=a1 and operator-1\.1 .* reconcileID=b1/)
  })

  it("passes reconciles of one object that follow each other, touch at one millisecond, or run in one process", () => {
    const found = Overlap.check([
      log("operator-0.1", [...work(100, 300, "a1"), ...work(310, 320, "a2"), ...work(500, 600, "a3", "app-2")]),
      log("operator-1.1", [...work(300, 305, "b1"), ...work(320, 400, "b2"), ...work(500, 600, "b3", "app-3")])
    ])
    expect(found.intervals).toHaveLength(6)
    expect(found.overlaps).toEqual([])
    // within one process the workqueue serialises a key; lines of one process never count against each other
    expect(Overlap.check([log("operator-0.1", [...work(100, 300, "a1"), ...work(200, 400, "a2")])]).overlaps).toEqual(
      []
    )
  })

  it("ends a reconcile without a last line when its process ended: a killed replica overlaps only until then", () => {
    const killed = log("operator-0.1", [line(100, "Reconcile started", "a1")], 200)
    expect(Overlap.check([killed, log("operator-1.1", work(250, 400, "b1"))]).overlaps).toEqual([])
    const found = Overlap.check([killed, log("operator-1.1", work(150, 400, "b1"))])
    expect(found.overlaps.map((o) => o.ms)).toEqual([50])
    expect(found.intervals.find((i) => i.reconcileID === "a1")).toMatchObject({
      end: Date.parse(at(200)),
      last: undefined
    })
    // a lost Lease halts the workers: an open reconcile ends at that line (the runtime logs no last line for it)
    const halted = log("operator-0.1", [
      line(100, "Reconcile started", "a1"),
      `time=${at(180)} level=warn msg="leadership lost" lease=default/webapp-replica-0-1 identity=replica-0-1`
    ], 900)
    expect(Overlap.check([halted]).intervals[0]).toMatchObject({ end: Date.parse(at(180)) })
    expect(Overlap.check([halted, log("operator-1.1", work(180, 400, "b1"))]).overlaps).toEqual([])
    expect(Overlap.check([halted, log("operator-1.1", work(179, 400, "b1"))]).overlaps).toHaveLength(1)
    // a process still running: its open reconcile is still going on
    expect(
      Overlap.check([log("operator-0.1", [line(100, "Reconcile started", "a1")]), log("x", work(900, 950, "b1"))])
        .overlaps
    ).toHaveLength(1)
  })

  it("does not count the gate's release or no-op as a reconcile, but does count an interrupted one", () => {
    const release = [
      line(100, "Reconcile started", "a1"),
      line(290, "Released to the ring", "a1"),
      line(300, "Reconcile successful", "a1")
    ]
    const noop = [line(400, "Reconcile started", "a2"), line(401, "Reconcile successful", "a2")]
    const interrupted = [line(500, "Reconcile started", "a3"), line(700, "Reconcile interrupted", "a3")]
    const found = Overlap.check([
      log("operator-0.1", [...release, ...noop, ...interrupted]),
      log("operator-1.1", work(200, 650, "b1"))
    ])
    expect(found.intervals.map((i) => i.kind).sort()).toEqual(["gated", "release", "work", "work"])
    expect(found.overlaps.map((o) => `${o.a.reconcileID}/${o.b.reconcileID}`)).toEqual(["b1/a3"])
  })

  it("parses logfmt: quoted values with escapes, bare values, and ignores lines without a time", () => {
    expect(Overlap.parseLine(`time=${at(5)} level=info msg="a \\"b\\" = c" name=x`)).toEqual({
      time: Date.parse(at(5)),
      fields: { time: at(5), level: "info", msg: "a \"b\" = c", name: "x" }
    })
    expect(Overlap.parseLine("{\"chaos\":\"cleanup\"}")).toBeUndefined()
    expect(Overlap.check([log("p", ["garbage reconcileID=", ...work(1, 2, "a1")])]).intervals).toHaveLength(1)
  })

  it("finds the reconciles of a cut-off replica still running after its deadline", () => {
    const cut = log("operator-0.1", [
      ...work(100, 300, "a1"),
      line(900, "Reconcile started", "a2"),
      line(1500, "Reconcile interrupted", "a2"),
      line(1600, "Reconcile started", "a3", "app-2"),
      line(1601, "Reconcile successful", "a3", "app-2")
    ], 3000)
    const { intervals } = Overlap.check([cut, log("operator-1.1", work(2000, 2500, "b1"))])
    expect(Overlap.runningAfter(intervals, "operator-0.1", Date.parse(at(1000))).map((i) => i.reconcileID)).toEqual([
      "a2"
    ])
    expect(Overlap.runningAfter(intervals, "operator-0.1", Date.parse(at(1500)))).toEqual([])
  })
})
