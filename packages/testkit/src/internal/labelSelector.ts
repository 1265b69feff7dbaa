/**
 * Label selector parsing and matching with the grammar of apimachinery's
 * `labels.Parse`: requirements separated by commas; `key`, `!key`,
 * `key=v`, `key==v`, `key!=v`, `key in (a,b)`, `key notin (a,b)`,
 * `key>n`, `key<n`. Hand-written: no small maintained npm package implements
 * this grammar.
 */

export type Operator = "=" | "!=" | "in" | "notin" | "exists" | "!" | ">" | "<"

export interface Requirement {
  readonly key: string
  readonly operator: Operator
  readonly values: ReadonlyArray<string>
}

export type ParseResult = { readonly _tag: "Ok"; readonly requirements: ReadonlyArray<Requirement> } | {
  readonly _tag: "Err"
  readonly message: string
}

const qualifiedName =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/
const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/

export const isQualifiedName = (key: string): boolean => {
  if (!qualifiedName.test(key)) return false
  const slash = key.indexOf("/")
  return slash < 0 || slash <= 253
}

export const isLabelValue = (value: string): boolean => value.length <= 63 && labelValue.test(value)

type Token = { kind: "id"; text: string } | { kind: "op"; text: string }

const tokenize = (input: string): Array<Token> | string => {
  const tokens: Array<Token> = []
  let i = 0
  while (i < input.length) {
    const c = input[i]!
    if (c === " " || c === "\t") {
      i++
      continue
    }
    const two = input.slice(i, i + 2)
    if (two === "==" || two === "!=") {
      tokens.push({ kind: "op", text: two })
      i += 2
      continue
    }
    if ("=!(),<>".includes(c)) {
      tokens.push({ kind: "op", text: c })
      i++
      continue
    }
    let j = i
    while (j < input.length && !" \t=!(),<>".includes(input[j]!)) j++
    tokens.push({ kind: "id", text: input.slice(i, j) })
    i = j
  }
  return tokens
}

export const parse = (input: string): ParseResult => {
  const tokens = tokenize(input)
  if (typeof tokens === "string") return { _tag: "Err", message: tokens }
  const requirements: Array<Requirement> = []
  let pos = 0
  const peek = (): Token | undefined => tokens[pos]
  const err = (message: string): ParseResult => ({ _tag: "Err", message: `unable to parse requirement: ${message}` })
  if (tokens.length === 0) return { _tag: "Ok", requirements }
  while (pos < tokens.length) {
    let t = peek()
    let negated = false
    if (t?.kind === "op" && t.text === "!") {
      negated = true
      pos++
      t = peek()
    }
    if (t?.kind !== "id") return err(`found '${t?.text ?? "end of string"}', expected: identifier`)
    const key = t.text
    if (!isQualifiedName(key)) return err(`invalid label key "${key}"`)
    pos++
    if (negated) {
      requirements.push({ key, operator: "!", values: [] })
    } else {
      const op = peek()
      if (op === undefined || (op.kind === "op" && op.text === ",")) {
        requirements.push({ key, operator: "exists", values: [] })
      } else if (op.kind === "op" && ["=", "==", "!="].includes(op.text)) {
        pos++
        const v = peek()
        let value = ""
        if (v?.kind === "id") {
          value = v.text
          pos++
        } else if (v !== undefined && !(v.kind === "op" && v.text === ",")) {
          return err(`found '${v.text}', expected: identifier`)
        }
        if (!isLabelValue(value)) return err(`invalid label value: "${value}"`)
        requirements.push({ key, operator: op.text === "!=" ? "!=" : "=", values: [value] })
      } else if (op.kind === "op" && (op.text === ">" || op.text === "<")) {
        pos++
        const v = peek()
        if (v?.kind !== "id" || !/^-?\d+$/.test(v.text)) {
          return err(`for '${op.text}' operator, the value must be an integer`)
        }
        pos++
        requirements.push({ key, operator: op.text as ">" | "<", values: [v.text] })
      } else if (op.kind === "id" && (op.text === "in" || op.text === "notin")) {
        pos++
        if (!(peek()?.kind === "op" && peek()!.text === "(")) {
          return err(`found '${peek()?.text ?? "end of string"}', expected: '('`)
        }
        pos++
        const values: Array<string> = []
        for (;;) {
          const v = peek()
          if (v === undefined) return err("found end of string, expected: ')'")
          if (v.kind === "op" && v.text === ")") {
            pos++
            break
          }
          if (v.kind === "op" && v.text === ",") {
            pos++
            if (values.length === 0 || (peek()?.kind === "op" && [",", ")"].includes(peek()!.text))) values.push("")
            continue
          }
          if (v.kind !== "id") return err(`found '${v.text}', expected: identifier`)
          if (!isLabelValue(v.text)) return err(`invalid label value: "${v.text}"`)
          values.push(v.text)
          pos++
        }
        if (op.text === "in" && values.length === 0) {
          return err("for 'in', 'notin' operators, values set can't be empty")
        }
        requirements.push({ key, operator: op.text, values })
      } else {
        return err(`found '${op.text}', expected: in, notin, =, ==, !=, gt, lt`)
      }
    }
    const sep = peek()
    if (sep === undefined) break
    if (sep.kind === "op" && sep.text === ",") {
      pos++
      if (peek() === undefined) return err("found end of string, expected: identifier")
      continue
    }
    return err(`found '${sep.text}', expected: ',' or 'end of string'`)
  }
  return { _tag: "Ok", requirements }
}

export const matches = (
  requirements: ReadonlyArray<Requirement>,
  labels: { readonly [key: string]: string } | undefined
): boolean =>
  requirements.every((r) => {
    const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key)
    const value = has ? labels![r.key]! : undefined
    switch (r.operator) {
      case "=":
        return has && value === r.values[0]
      case "in":
        return has && r.values.includes(value!)
      case "!=":
        return !has || value !== r.values[0]
      case "notin":
        return !has || !r.values.includes(value!)
      case "exists":
        return has
      case "!":
        return !has
      case ">":
      case "<": {
        if (!has || !/^-?\d+$/.test(value!)) return false
        const n = Number(value)
        const bound = Number(r.values[0])
        return r.operator === ">" ? n > bound : n < bound
      }
    }
  })

/** Requirements of a `metav1.LabelSelector` (`matchLabels` + `matchExpressions`). */
export const fromLabelSelector = (selector: {
  readonly matchLabels?: { readonly [key: string]: string }
  readonly matchExpressions?: ReadonlyArray<{ key: string; operator: string; values?: ReadonlyArray<string> }>
}): ReadonlyArray<Requirement> => {
  const out: Array<Requirement> = []
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    out.push({ key, operator: "=", values: [value] })
  }
  for (const e of selector.matchExpressions ?? []) {
    const op: Operator = e.operator === "In"
      ? "in"
      : e.operator === "NotIn"
      ? "notin"
      : e.operator === "Exists"
      ? "exists"
      : "!"
    out.push({ key: e.key, operator: op, values: e.values ?? [] })
  }
  return out
}

/** Field selectors: `metadata.name` and `metadata.namespace` with `=`, `==`, `!=`. */
export interface FieldRequirement {
  readonly field: "metadata.name" | "metadata.namespace"
  readonly negated: boolean
  readonly value: string
}

export const parseFieldSelector = (
  input: string
): { readonly _tag: "Ok"; readonly requirements: ReadonlyArray<FieldRequirement> } | {
  readonly _tag: "Err"
  readonly message: string
} => {
  const out: Array<FieldRequirement> = []
  for (const raw of input.split(",")) {
    const part = raw.trim()
    if (part === "") continue
    const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(part)
    if (m === null) return { _tag: "Err", message: `invalid selector: '${input}'; can't understand '${part}'` }
    const field = m[1]!.trim()
    if (field !== "metadata.name" && field !== "metadata.namespace") {
      return { _tag: "Err", message: `field label not supported: ${field}` }
    }
    out.push({ field, negated: m[2] === "!=", value: m[3]!.trim() })
  }
  return { _tag: "Ok", requirements: out }
}

export const matchesFields = (
  requirements: ReadonlyArray<FieldRequirement>,
  name: string,
  namespace: string | undefined
): boolean =>
  requirements.every((r) => {
    const actual = r.field === "metadata.name" ? name : namespace ?? ""
    return r.negated ? actual !== r.value : actual === r.value
  })
