/**
 * Compile errors that teach: a reconcile whose error channel holds an error that is not an outcome
 * (`Retryable | Terminal | RequeueAfter`) does not compile, and the compiler's message is reported at the reconcile
 * itself, names the offending error type and says what to use — with no unrelated overload and none of effect's
 * internals (`YieldableError`, `[Effect.TypeId]`); and a controller run without the `Manager` (or a Manager without
 * its `LeaderElection`) does not compile either, naming the missing service. The fixtures are compiled with the
 * TypeScript 5.9 compiler API against the in-repo sources (`support/typecheck.ts`); each line that must carry the
 * error is marked `// ✗`.
 */
import { assert, describe, it } from "@effect/vitest"
import { type Diagnostic, show, typecheck } from "./support/typecheck.js"

const imports = `import { Data, Effect } from "effect"
import { Controller, Handler, Reconcile, Source } from "@reconcile/core"
import { Finalizer, KubeController, type KubeError, KubeOutcome, Resource, Undecodable } from "@reconcile/kube"

class NotFound extends Data.TaggedError("NotFound")<{ readonly name: string }> {}
class Invalid extends Data.TaggedError("Invalid")<{}> {}
declare const read: (name: string) => Effect.Effect<string, NotFound | Invalid>
declare const kubeCall: Effect.Effect<void, KubeError.KubeError>
`

/** Fixtures that must not compile: name → [text, the offending type as the message prints it]. */
const bad: Record<string, readonly [string, string]> = {
  "by object, a plain Error": [
    `export const L = KubeController.make({
  name: "a",
  for: Resource.ConfigMap,
  reconcile: (cm) => Effect.fail(new Error(cm.metadata?.name)) // ✗
})`,
    "NotAnOutcome<Error>"
  ],
  "by decoded object with an inline onUndecodable, a tagged error beside an outcome": [
    `export const L = KubeController.make({
  name: "b",
  for: Resource.ConfigMap,
  reconcile: (cm) => cm.data === undefined ? Reconcile.requeueAfter("1 minute") : read("x"), // ✗
  onUndecodable: (u) => Effect.logWarning(u.metadata.name)
})`,
    "NotAnOutcome<NotFound | Invalid>"
  ],
  "by object, an Effect.gen whose errors are partly classified": [
    `export const L = KubeController.make({
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
  "by request, a Kubernetes API error not mapped (block body)": [
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
  "by request, a reconcile defined elsewhere": [
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
export const byObject = KubeController.make({
  name: "ok-a",
  for: Resource.ConfigMap,
  reconcile: (cm) => Undecodable.isUndecodable(cm) ? Effect.void : Effect.log(cm.metadata?.name)
})
export const byDecodedObject = KubeController.make({
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
    req.name === "" ? Reconcile.requeueAfter("10 seconds") : kubeCall.pipe(KubeOutcome.classify)
})
// Reconcile.classify after KubeOutcome.classify in a pipe: its error type comes from the pipe, not from the
// reconcile's expected type (which would leave InvalidSpec out)
export const classifiedInPipe = KubeController.make({
  name: "ok-g",
  for: Resource.ConfigMap,
  reconcile: (cm) =>
    Effect.gen(function*() {
      yield* kubeCall
      const value = yield* read(cm.metadata?.name ?? "")
      if (value === "") return yield* Reconcile.requeueAfter("10 seconds")
    }).pipe(
      KubeOutcome.classify,
      Reconcile.classify((e) => e._tag === "Invalid" ? Reconcile.terminal(e) : Reconcile.retryable(e))
    ),
  onUndecodable: Undecodable.terminal
})
export const withFinalizer = KubeController.make({
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
const narrow = `export const L = KubeController.make({
  name: "h",
  for: Resource.ConfigMap,
  reconcile: (cm: Resource.ConfigMap) => Effect.log(cm.data) // ✗
})`

/**
 * Requirements in the types: a controller runs under the Manager, and the Manager needs the replica's election. Each
 * fixture launches a program that forgets one: name → [text, the service the message must name].
 */
const missing: Record<string, readonly [string, string]> = {
  "a KubeController's Layer without the Manager": [
    `import { Layer } from "effect"
import { Cache } from "@reconcile/kube"
declare const Cluster: Layer.Layer<Cache.Cache>
const Settings = KubeController.make({ name: "m1", for: Resource.ConfigMap, reconcile: () => Effect.void })
export const main: Effect.Effect<never> = Layer.launch(KubeController.layer(Settings).pipe(Layer.provide(Cluster))) // ✗`,
    "Manager"
  ],
  "a core Controller's Layer without the Manager": [
    `import { Layer } from "effect"
declare const channel: Source.Source<{ readonly metadata: { readonly name: string } }>
const Pods = Controller.layer({ name: "m2", watches: [Controller.watch(channel, Handler.forObject)], reconcile: () => Effect.void })
export const main: Effect.Effect<never> = Layer.launch(Pods) // ✗`,
    "Manager"
  ],
  "the Manager without a LeaderElection": [
    `import { Layer } from "effect"
import { Manager } from "@reconcile/core"
import { Cache } from "@reconcile/kube"
declare const Cluster: Layer.Layer<Cache.Cache>
const Settings = KubeController.make({ name: "m3", for: Resource.ConfigMap, reconcile: () => Effect.void })
const Main = KubeController.layer(Settings).pipe(Layer.provide(Manager.layer()), Layer.provide(Cluster))
export const main: Effect.Effect<never, unknown> = Layer.launch(Main) // ✗`,
    "LeaderElection"
  ]
}

/** The same programs with what they forgot: they compile. */
const complete = `import { Layer } from "effect"
import { LeaderElection, Manager } from "@reconcile/core"
import { Cache } from "@reconcile/kube"
declare const Cluster: Layer.Layer<Cache.Cache>
declare const channel: Source.Source<{ readonly metadata: { readonly name: string } }>
const Settings = KubeController.make({ name: "ok-m1", for: Resource.ConfigMap, reconcile: () => Effect.void })
const Pods = Controller.layer({ name: "ok-m2", watches: [Controller.watch(channel, Handler.forObject)], reconcile: () => Effect.void })
const Main = Layer.mergeAll(KubeController.layer(Settings), Pods).pipe(
  Layer.provide(Manager.layer()),
  Layer.provide(LeaderElection.layerAlwaysLeader),
  Layer.provide(Cluster)
)
export const main: Effect.Effect<never, unknown> = Layer.launch(Main)
`

const names = Object.keys(bad)
const fileOf = (i: number) => `bad${i}.ts`
const missingNames = Object.keys(missing)
const missingFileOf = (i: number) => `missing${i}.ts`
/** The fixtures' own imports go first (an import after a statement is an error). */
const withImports = (text: string) => {
  const lines = text.split("\n")
  const own = lines.filter((line) => line.startsWith("import "))
  return [...own, imports, ...lines.filter((line) => !line.startsWith("import "))].join("\n")
}
const diagnostics = typecheck({
  "good.ts": imports + good,
  "narrow.ts": imports + narrow,
  "complete.ts": withImports(complete),
  ...Object.fromEntries(names.map((name, i) => [fileOf(i), imports + bad[name]![0]])),
  ...Object.fromEntries(missingNames.map((name, i) => [missingFileOf(i), withImports(missing[name]![0])]))
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

  it("a program with its Manager and LeaderElection compiles", () => {
    assert.deepStrictEqual(of("complete.ts").map(show), [])
  })

  missingNames.forEach((name, i) => {
    it(`${name}: one error, at the launch, naming the missing service`, () => {
      const text = withImports(missing[name]![0])
      const marked = text.split("\n").findIndex((line) => line.includes("// ✗")) + 1
      const found = of(missingFileOf(i))
      assert.strictEqual(found.length, 1, found.map(show).join("\n"))
      assert.strictEqual(found[0]!.line, marked, show(found[0]!))
      assert.include(found[0]!.message, missing[name]![1], show(found[0]!))
    })
  })
})
