/**
 * `x-kubernetes-validations` rules, evaluated with `@bufbuild/cel` as apiextensions-apiserver evaluates them: `self`
 * (and `oldSelf` in transition rules, correlated by field name and map-list keys), Kubernetes' list and regex
 * libraries, `message`/`messageExpression`/`reason`/`fieldPath`, ratcheting of unchanged values.
 */
import { type CelEnv, celEnv, celMethod, CelScalar, isCelError, isCelList, listType, parse, plan } from "@bufbuild/cel"
import { strings } from "@bufbuild/cel/ext"
import { deepEqual, isObject, type Obj } from "../json.js"
import {
  additionalOf,
  appendKey,
  childSchema,
  type FieldError,
  hasOwn,
  itemsOf,
  omitted,
  propsOf,
  type Schema,
  schemaTypes
} from "./schema.js"

/** The value of a field as CEL sees it: integers as int (bigint), objects as maps, by the schema. */
export const toCel = (v: unknown, s: Schema | undefined): unknown => {
  if (v === null || v === undefined) return null
  if (typeof v === "number") {
    const types = s === undefined ? [] : schemaTypes(s)
    if (types.includes("number")) return v
    return Number.isInteger(v) ? BigInt(v) : v
  }
  if (Array.isArray(v)) return v.map((x) => toCel(x, itemsOf(s)))
  if (isObject(v)) {
    const m = new Map<string, unknown>()
    for (const [k, x] of Object.entries(v)) m.set(k, toCel(x, childSchema(s, k)))
    return m
  }
  return v
}

const fromCelNumber = (v: unknown): number => (typeof v === "bigint" ? Number(v) : Number(v))
const celItems = (list: unknown): Array<unknown> => (isCelList(list) ? [...list] : [])

/** Kubernetes' list library (`sum`, `min`, `max`, `isSorted`, `indexOf`, `lastIndexOf`) and regex `find`/`findAll`. */
const k8sFuncs = [
  celMethod("sum", listType(CelScalar.INT), [], CelScalar.INT, function() {
    return celItems(this).reduce<bigint>((a, b) => a + (b as bigint), 0n)
  }),
  celMethod("sum", listType(CelScalar.DOUBLE), [], CelScalar.DOUBLE, function() {
    return celItems(this).reduce<number>((a, b) => a + fromCelNumber(b), 0)
  }),
  celMethod("min", listType(CelScalar.INT), [], CelScalar.INT, function() {
    const xs = celItems(this) as Array<bigint>
    if (xs.length === 0) throw new Error("min called on empty list")
    return xs.reduce((a, b) => (b < a ? b : a))
  }),
  celMethod("max", listType(CelScalar.INT), [], CelScalar.INT, function() {
    const xs = celItems(this) as Array<bigint>
    if (xs.length === 0) throw new Error("max called on empty list")
    return xs.reduce((a, b) => (b > a ? b : a))
  }),
  celMethod("isSorted", listType(CelScalar.DYN), [], CelScalar.BOOL, function() {
    const xs = celItems(this) as Array<any>
    return xs.every((x, i) => i === 0 || xs[i - 1] <= x)
  }),
  celMethod("indexOf", listType(CelScalar.DYN), [CelScalar.DYN], CelScalar.INT, function(x) {
    return BigInt(celItems(this).findIndex((y) => y === x))
  }),
  celMethod("lastIndexOf", listType(CelScalar.DYN), [CelScalar.DYN], CelScalar.INT, function(x) {
    const xs = celItems(this)
    for (let i = xs.length - 1; i >= 0; i--) if (xs[i] === x) return BigInt(i)
    return -1n
  }),
  celMethod("find", CelScalar.STRING, [CelScalar.STRING], CelScalar.STRING, function(pattern) {
    const m = new RegExp(pattern, "u").exec(this)
    return m === null ? "" : m[0]
  }),
  celMethod("findAll", CelScalar.STRING, [CelScalar.STRING], listType(CelScalar.STRING), function(pattern) {
    return [...this.matchAll(new RegExp(pattern, "gu"))].map((m) => m[0])
  })
]

let env: CelEnv | undefined
const celEnvironment = (): CelEnv => (env ??= celEnv({ funcs: [...strings, ...k8sFuncs] }))

type Program = (ctx: Record<string, unknown>) => unknown
const programs = new Map<string, Program | string>()
/** A planned CEL program, or the compile error text. */
export const compile = (expr: string): Program | string => {
  let p = programs.get(expr)
  if (p === undefined) {
    try {
      const run = plan(celEnvironment(), parse(expr))
      p = (ctx) => run(ctx as never)
    } catch (e) {
      p = e instanceof Error ? e.message : String(e)
    }
    programs.set(expr, p)
  }
  return p
}

const usesOldSelf = (rule: string): boolean => /\boldSelf\b/.test(rule)

const fieldPathChild = (path: string, child: string): string => {
  const c = child.startsWith(".") ? child.slice(1) : child
  return path === "" ? c : `${path}.${c}`
}
const celField = (path: string): string => (path === "" ? "<nil>" : path)

const evalRules = (
  x: unknown,
  old: unknown,
  hasOld: boolean,
  s: Schema,
  path: string,
  errs: Array<FieldError>
): void => {
  const rules = s["x-kubernetes-validations"]
  if (!Array.isArray(rules) || rules.length === 0) return
  const type = typeof s.type === "string" ? s.type : ""
  let self: unknown
  let oldSelf: unknown
  for (const rule of rules as Array<Obj>) {
    if (typeof rule?.rule !== "string" || rule.rule.trim() === "") continue
    const ruleText = rule.rule as string
    const message = typeof rule.message === "string" ? rule.message.trim() : ""
    const ruleString = message !== "" ? message : ruleText.trim()
    const transition = usesOldSelf(ruleText)
    // `optionalOldSelf` rules see oldSelf as a CEL optional, which @bufbuild/cel lacks: they are not evaluated.
    if (rule.optionalOldSelf === true || (transition && !hasOld)) continue
    // Ratcheting: a rule without oldSelf does not fail an update on a value the update left unchanged.
    if (!transition && hasOld && deepEqual(x, old)) continue
    const program = compile(ruleText)
    if (typeof program === "string") {
      errs.push({
        type: "FieldValueInvalid",
        field: celField(path),
        value: type,
        detail: `rule compile error: ${program}`
      })
      continue
    }
    self ??= toCel(x, s)
    if (hasOld) oldSelf ??= toCel(old, s)
    const ctx: Record<string, unknown> = { self }
    if (transition) ctx.oldSelf = oldSelf
    let result: unknown
    try {
      result = program(ctx)
    } catch (e) {
      result = e
    }
    if (isCelError(result) || result instanceof Error) {
      const text = (result as Error).message
      const detail = text.startsWith("found no matching overload")
        ? `'no such overload': call arguments did not match a supported operator, function or macro signature for rule: ${ruleString}`
        : `${text.replace(/^field not found: /, "no such key: ")} evaluating rule: ${ruleString}`
      errs.push({ type: "FieldValueInvalid", field: celField(path), value: type, detail })
      continue
    }
    if (result === true) continue
    const field = celField(
      typeof rule.fieldPath === "string" && rule.fieldPath !== "" ? fieldPathChild(path, rule.fieldPath) : path
    )
    let detail = message !== "" ? message : `failed rule: ${ruleString}`
    // 1.36 shows the value itself, but not an object's or a list's
    const shown = isObject(x) || Array.isArray(x) ? omitted : x
    if (typeof rule.messageExpression === "string" && rule.messageExpression !== "") {
      const msgProgram = compile(rule.messageExpression)
      let msg: unknown
      try {
        msg = typeof msgProgram === "string" ? undefined : msgProgram({ self, ...(hasOld ? { oldSelf } : {}) })
      } catch {
        msg = undefined
      }
      if (typeof msg === "string" && msg.trim() !== "" && !/\n/.test(msg.trim())) detail = msg.trim()
    }
    switch (rule.reason) {
      case "FieldValueForbidden":
        errs.push({ type: "FieldValueForbidden", field, value: "", detail })
        break
      case "FieldValueRequired":
        errs.push({ type: "FieldValueRequired", field, value: "", detail })
        break
      case "FieldValueDuplicate":
        errs.push({ type: "FieldValueDuplicate", field, value: shown, detail: "" })
        break
      default:
        errs.push({ type: "FieldValueInvalid", field, value: shown, detail })
    }
  }
}

/** Walks the object evaluating `x-kubernetes-validations`; `old` correlates by field name and map-list keys. */
export const validateCel = (
  x: unknown,
  old: unknown,
  hasOld: boolean,
  s: Schema | undefined,
  path: string,
  errs: Array<FieldError>
): void => {
  if (s === undefined || x === null || x === undefined) return
  evalRules(x, old, hasOld, s, path, errs)
  if (Array.isArray(x)) {
    const items = itemsOf(s)
    if (items === undefined) return
    const keys = s["x-kubernetes-list-type"] === "map" && Array.isArray(s["x-kubernetes-list-map-keys"])
      ? (s["x-kubernetes-list-map-keys"] as Array<string>)
      : undefined
    const oldItems = hasOld && Array.isArray(old) ? old : []
    x.forEach((v, i) => {
      const match = keys === undefined || !isObject(v)
        ? undefined
        : oldItems.find((o) => isObject(o) && keys.every((k) => deepEqual(o[k], v[k])))
      validateCel(v, match, match !== undefined, items, `${path}[${i}]`, errs)
    })
    return
  }
  if (!isObject(x)) return
  const props = propsOf(s)
  const additional = additionalOf(s)
  const oldObj = hasOld && isObject(old) ? old : undefined
  const granular = s["x-kubernetes-map-type"] !== "atomic"
  if (additional !== undefined && props === undefined) {
    for (const [k, v] of Object.entries(x)) {
      const has = granular && oldObj !== undefined && hasOwn(oldObj, k)
      validateCel(v, has ? oldObj[k] : undefined, has, additional, `${path}[${k}]`, errs)
    }
  }
  if (props !== undefined) {
    for (const [k, v] of Object.entries(x)) {
      if (!hasOwn(props, k)) continue
      const has = granular && oldObj !== undefined && hasOwn(oldObj, k)
      validateCel(v, has ? oldObj[k] : undefined, has, props[k], appendKey(path, k), errs)
    }
  }
}
