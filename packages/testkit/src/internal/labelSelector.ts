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

/**
 * One term of a field selector (`field=value`, `field==value`, `field!=value`). Which fields a kind supports and
 * how a field reads from an object are the kind's business (see `fieldSelectors.ts`).
 */
export interface FieldRequirement {
  readonly field: string
  readonly negated: boolean
  readonly value: string
}

/** Splits on commas not escaped with a backslash, as apimachinery's `fields.splitTerms`. */
const splitTerms = (input: string): Array<string> => {
  const out: Array<string> = []
  let current = ""
  for (let i = 0; i < input.length; i++) {
    const c = input[i]!
    if (c === "\\" && i + 1 < input.length) {
      current += c + input[i + 1]!
      i++
    } else if (c === ",") {
      out.push(current)
      current = ""
    } else {
      current += c
    }
  }
  out.push(current)
  return out
}

/** `\\`, `\,` and `\=` unescaped; any other escape or an unescaped `,`/`=` is an error (`fields.UnescapeValue`). */
const unescapeValue = (value: string): string | { readonly error: string } => {
  let out = ""
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!
    if (c === "\\") {
      const next = value[i + 1]
      if (next === undefined || !"\\,=".includes(next)) {
        return { error: `invalid escape sequence: ${value.slice(i, i + 2)}` }
      }
      out += next
      i++
    } else if (c === "," || c === "=") {
      return { error: `invalid field selector: unescaped character in value: ${c}` }
    } else {
      out += c
    }
  }
  return out
}

/**
 * Parses a field selector with apimachinery's grammar (`fields.ParseSelector`): terms separated by unescaped
 * commas, each `label=value`, `label==value` or `label!=value` (the first operator found wins; the label is not
 * trimmed). `check` returns the error text for a label the kind does not support; by default only `metadata.name`
 * and `metadata.namespace` are.
 */
export const parseFieldSelector = (
  input: string,
  check: (field: string) => string | undefined = (field) =>
    field === "metadata.name" || field === "metadata.namespace" ? undefined : `field label not supported: ${field}`
): { readonly _tag: "Ok"; readonly requirements: ReadonlyArray<FieldRequirement> } | {
  readonly _tag: "Err"
  readonly message: string
} => {
  const out: Array<FieldRequirement> = []
  for (const part of splitTerms(input).sort()) {
    if (part === "") continue
    let split: { readonly at: number; readonly op: string } | undefined
    for (let i = 0; i < part.length && split === undefined; i++) {
      for (const op of ["!=", "==", "="]) {
        if (part.startsWith(op, i)) {
          split = { at: i, op }
          break
        }
      }
    }
    if (split === undefined) return { _tag: "Err", message: `invalid selector: '${input}'; can't understand '${part}'` }
    const field = part.slice(0, split.at)
    const value = unescapeValue(part.slice(split.at + split.op.length))
    if (typeof value !== "string") return { _tag: "Err", message: value.error }
    const unsupported = check(field)
    if (unsupported !== undefined) return { _tag: "Err", message: unsupported }
    out.push({ field, negated: split.op === "!=", value })
  }
  return { _tag: "Ok", requirements: out }
}

/** Whether an object matches every term; `valueOf` reads a field (`metadata.*` only when omitted). */
export const matchesFields = (
  requirements: ReadonlyArray<FieldRequirement>,
  name: string,
  namespace: string | undefined,
  valueOf?: (field: string) => string
): boolean =>
  requirements.every((r) => {
    const actual = r.field === "metadata.name"
      ? name
      : r.field === "metadata.namespace"
      ? namespace ?? ""
      : valueOf?.(r.field) ?? ""
    return r.negated ? actual !== r.value : actual === r.value
  })
