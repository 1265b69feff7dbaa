/**
 * Compile errors that teach: a reconcile whose error channel holds an error that is not an outcome
 * (`Retryable | Terminal | RequeueAfter`) does not compile, and the compiler's message is reported at the reconcile
 * itself, names the offending error type and says what to use — with no unrelated overload and none of effect's
 * internals (`YieldableError`, `[Effect.TypeId]`). The fixtures are compiled with the TypeScript 5.9 compiler API
 * against the in-repo sources (`support/typecheck.ts`); each line that must carry the error is marked `// ✗`.
 */
import { assert, describe, it } from "@effect/vitest"
import { type Diagnostic, show, typecheck } from "./support/typecheck.js"

const imports = `import { Data, Effect } from "effect"
import { Controller, Handler, Reconcile, Source } from "@reconcile/core"
import { Finalizer, KubeController, KubeError, Resource, Undecodable } from "@reconcile/kube"

class NotFound extends Data.TaggedError("NotFound")<{ readonly name: string }> {}
class Invalid extends Data.TaggedError("Invalid")<{}> {}
declare const read: (name: string) => Effect.Effect<string, NotFound | Invalid>
declare const kubeCall: Effect.Effect<void, KubeError.KubeError>
`

/** Fixtures that must not compile: name → [text, the offending type as the message prints it]. */
const bad: Record<string, readonly [string, string]> = {
  "layer, by object, a plain Error": [
    `export const L = KubeController.layer({
  name: "a",
  for: Resource.ConfigMap,
  reconcile: (cm) => Effect.fail(new Error(cm.metadata?.name)) // ✗
})`,
    "NotAnOutcome<Error>"
  ],
  "layer, by decoded object with an inline onUndecodable, a tagged error beside an outcome": [
    `export const L = KubeController.layer({
  name: "b",
  for: Resource.ConfigMap,
  reconcile: (cm) => cm.data === undefined ? Reconcile.requeueAfter("1 minute") : read("x"), // ✗
  onUndecodable: (u) => Effect.logWarning(u.metadata.name)
})`,
    "NotAnOutcome<NotFound | Invalid>"
  ],
  "layer, by object, an Effect.gen whose errors are partly classified": [
    `export const L = KubeController.layer({
  name: "c",
  for: Resource.ConfigMap,
  reconcile: (cm) =>
    Effect.gen(function*() { // ✗ (the reconcile's effect starts here)
      const name = yield* read(cm.metadata?.name ?? "")
      yield* Effect.log(name)
    }).pipe(Effect.catchTag("NotFound", () => Effect.void))
})`,
    "NotAnOutcome<Invalid>"
  ],
  "make, by request, a Kubernetes API error not mapped (block body)": [
    `export const M = KubeController.make({
  name: "d",
  for: Resource.ConfigMap,
  reconcileRequest: (req) => { // ✗
    if (req.name === "") return Effect.void
    return kubeCall
  }
})`,
    "NotAnOutcome<"
  ],
  "make, by request, a reconcile defined elsewhere": [
    `const reconcile = (_req: { readonly name: string }) => Effect.fail(new Error("boom"))
export const M = KubeController.make({
  name: "e",
  for: Resource.ConfigMap,
  reconcileRequest: reconcile // ✗
})`,
    "NotAnOutcome<Error>"
  ],
  "core Controller.make, a plain Error": [
    `export const M = Effect.gen(function*() {
  const channel = yield* Source.channel<{ readonly metadata: { readonly name: string } }>("c")
  return yield* Controller.make({
    name: "f",
    watches: [Controller.watch(channel.source, Handler.forObject)],
    reconcile: (req) => Effect.fail(new Error(req.name)) // ✗
  })
})`,
    "NotAnOutcome<Error>"
  ],
  "core Controller.layer, a tagged error": [
    `export const M = Effect.gen(function*() {
  const channel = yield* Source.channel<{ readonly metadata: { readonly name: string } }>("c")
  return Controller.layer({
    name: "g",
    watches: [Controller.watch(channel.source, Handler.forObject)],
    reconcile: (req) => read(req.name) // ✗
  })
})`,
    "NotAnOutcome<NotFound | Invalid>"
  ]
}

/** Every way to write a reconcile that is right must still compile, with its parameter types inferred. */
const good = `
export const byObject = KubeController.layer({
  name: "ok-a",
  for: Resource.ConfigMap,
  reconcile: (cm) => Undecodable.is(cm) ? Effect.void : Effect.log(cm.metadata?.name)
})
export const byDecodedObject = KubeController.layer({
  name: "ok-b",
  for: Resource.ConfigMap,
  reconcile: (cm) => Effect.log(cm.data),
  onUndecodable: (u) => Effect.logWarning(u.metadata.name)
})
export const byDecodedObjectTerminal = KubeController.make({
  name: "ok-c",
  for: Resource.ConfigMap,
  reconcile: (cm) =>
    read(cm.metadata?.name ?? "").pipe(
      Effect.catchTag("NotFound", () => Effect.void),
      Reconcile.classify((e) => Reconcile.terminal(e))
    ),
  onUndecodable: Undecodable.terminal
})
export const byRequest = KubeController.make({
  name: "ok-d",
  for: Resource.ConfigMap,
  reconcileRequest: (req) =>
    req.name === "" ? Reconcile.requeueAfter("10 seconds") : kubeCall.pipe(KubeError.toOutcome)
})
// Reconcile.classify after KubeError.toOutcome in a pipe: its error type comes from the pipe, not from the
// reconcile's expected type (which would leave InvalidSpec out)
export const classifiedInPipe = KubeController.layer({
  name: "ok-g",
  for: Resource.ConfigMap,
  reconcile: (cm) =>
    Effect.gen(function*() {
      yield* kubeCall
      const value = yield* read(cm.metadata?.name ?? "")
      if (value === "") return yield* Reconcile.requeueAfter("10 seconds")
    }).pipe(
      KubeError.toOutcome,
      Reconcile.classify((e) => e._tag === "Invalid" ? Reconcile.terminal(e) : Reconcile.retryable(e))
    ),
  onUndecodable: Undecodable.terminal
})
export const withFinalizer = KubeController.layer({
  name: "ok-e",
  for: Resource.ConfigMap,
  reconcile: Finalizer.reconcile({
    resource: Resource.ConfigMap,
    name: "example.com/cleanup",
    apply: () => Effect.void,
    cleanup: () => Effect.void
  })
})
export const core = Effect.gen(function*() {
  const channel = yield* Source.channel<{ readonly metadata: { readonly name: string } }>("c")
  return yield* Controller.make({
    name: "ok-f",
    watches: [Controller.watch(channel.source, Handler.forObject)],
    reconcile: (req) => read(req.name).pipe(Reconcile.asRetryable)
  })
})
`

/** A reconcile for decoded objects only, without `onUndecodable`: the message names `Undecodable`. */
const narrow = `export const L = KubeController.layer({
  name: "h",
  for: Resource.ConfigMap,
  reconcile: (cm: Resource.ConfigMap) => Effect.log(cm.data) // ✗
})`

const names = Object.keys(bad)
const fileOf = (i: number) => `bad${i}.ts`
const diagnostics = typecheck({
  "good.ts": imports + good,
  "narrow.ts": imports + narrow,
  ...Object.fromEntries(names.map((name, i) => [fileOf(i), imports + bad[name]![0]]))
})
const of = (file: string): Array<Diagnostic> => diagnostics.filter((d) => d.file === file)

describe("compile errors that teach", () => {
  it("a reconcile that takes only decoded objects, without onUndecodable: one error, at the reconcile", () => {
    const text = imports + narrow
    const found = of("narrow.ts")
    assert.strictEqual(found.length, 1, found.map(show).join("\n"))
    assert.strictEqual(found[0]!.line, text.split("\n").findIndex((line) => line.includes("// ✗")) + 1)
    assert.include(found[0]!.message, "Type 'Undecodable' is not assignable")
    assert.notInclude(found[0]!.message, "Overload 1 of")
  })

  it("every right way to write a reconcile compiles", () => {
    assert.deepStrictEqual(of("good.ts").map(show), [])
  })

  names.forEach((name, i) => {
    it(`${name}: one error, at the reconcile, naming the error and the fix`, () => {
      const text = imports + bad[name]![0]
      const marked = text.split("\n").findIndex((line) => line.includes("// ✗")) + 1
      const found = of(fileOf(i))
      assert.strictEqual(found.length, 1, found.map(show).join("\n"))
      const [d] = found
      assert.strictEqual(d!.line, marked, show(d!))
      assert.include(d!.message, bad[name]![1])
      assert.include(
        d!.message,
        "map these errors with Reconcile.classify, Reconcile.retryable or Reconcile.terminal"
      )
      for (const noise of ["Overload 1 of", "Overload 2 of", "YieldableError", "[Effect.TypeId]", "[TypeId]"]) {
        assert.notInclude(d!.message, noise, show(d!))
      }
      // at most the last signature of make/layer (the one that checks) is named, and the message stays short
      assert.isAtMost(d!.message.split("\n").length, 6, show(d!))
    })
  })
})
