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
const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
const namePart = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/

// apimachinery's validation messages (k8s.io/apimachinery/pkg/util/validation), with their examples and regexps

/** What a qualified name's name part must consist of. */
export const QUALIFIED =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
/** What an RFC 1123 subdomain must consist of. */
export const DNS_SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
/** What a label value must consist of. */
export const LABEL_VALUE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"

export const isQualifiedName = (key: string): boolean => {
  if (!qualifiedName.test(key)) return false
  const slash = key.indexOf("/")
  return slash < 0 || slash <= 253
}

export const isLabelValue = (value: string): boolean => value.length <= 63 && labelValue.test(value)

/** Why a label key is not one, as a selector words it (`IsQualifiedName`, label key wording); empty if valid. */
const labelKeyErrors = (key: string): Array<string> => {
  const parts = key.split("/")
  if (parts.length > 2) {
    return [`a valid label key ${QUALIFIED} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`]
  }
  const errs: Array<string> = []
  if (parts.length === 2) {
    const prefix = parts[0]!
    if (prefix === "") errs.push("prefix part must be non-empty")
    else {
      if (prefix.length > 253) errs.push("prefix part must be no more than 253 characters")
      if (!dnsSubdomain.test(prefix)) errs.push(`prefix part ${DNS_SUBDOMAIN}`)
    }
  }
  const name = parts[parts.length - 1]!
  if (name === "") errs.push("name part must be non-empty")
  else if (name.length > 63) errs.push("name part must be no more than 63 bytes")
  if (!namePart.test(name)) errs.push(`name part ${QUALIFIED}`)
  return errs
}

/** Why a label value is not one (`IsValidLabelValue`); empty if valid. */
const labelValueErrors = (value: string): Array<string> => [
  ...(value.length > 63 ? ["must be no more than 63 bytes"] : []),
  ...(value !== "" && !labelValue.test(value) ? [LABEL_VALUE] : [])
]

// -----------------------------------------------------------------------------------------------------------------
// the selector grammar, with apimachinery's lexer (`labels.Lexer`) and parser (`labels.Parser`) behaviour

type Token =
  | { readonly kind: "end"; readonly text: "" }
  | { readonly kind: "id"; readonly text: string }
  | { readonly kind: "op"; readonly text: string }

const symbols = new Set(["!", "!=", "(", ")", ",", "=", "==", ">", "<"])
const isSymbolStart = (c: string): boolean => "=!(),><".includes(c)
const isSpace = (c: string): boolean => c === " " || c === "\t" || c === "\r" || c === "\n"

/** Identifiers run to whitespace or a symbol; a symbol is the longest of `symbols`; NUL ends the input as Go's does. */
const tokenize = (input: string): Array<Token> => {
  const tokens: Array<Token> = []
  let i = 0
  for (;;) {
    while (i < input.length && isSpace(input[i]!)) i++
    if (i >= input.length || input[i] === "\0") break
    if (isSymbolStart(input[i]!)) {
      let text = input[i]!
      while (i + text.length < input.length && symbols.has(text + input[i + text.length]!)) {
        text += input[i + text.length]!
      }
      tokens.push({ kind: "op", text })
      i += text.length
      continue
    }
    let j = i
    while (j < input.length && input[j] !== "\0" && !isSpace(input[j]!) && !isSymbolStart(input[j]!)) j++
    tokens.push({ kind: "id", text: input.slice(i, j) })
    i = j
  }
  tokens.push({ kind: "end", text: "" })
  return tokens
}

const isOp = (t: Token, text: string): boolean => t.kind === "op" && t.text === text

/** A field error of a requirement, as `field.Error` prints it (the value quoted, as Go's `%q`). */
const fieldError = (field: string, value: string, detail: string): string =>
  `${field}: Invalid value: ${JSON.stringify(value)}: ${detail}`

/** Why one requirement does not parse (reported as `unable to parse requirement: <why>`). */
interface Failure {
  readonly why: string
}
const failure = (why: string): Failure => ({ why })
const isFailure = (u: unknown): u is Failure => typeof u === "object" && u !== null && "why" in u

const int64Text = /^[-+]?\d+$/
/** Whether Go's `strconv.ParseInt(v, 10, 64)` accepts the text. */
const isInt64Text = (v: string): boolean => int64Text.test(v) && BigInt(v) >= -(2n ** 63n) && BigInt(v) < 2n ** 63n

/** The values of a requirement, checked as `labels.NewRequirement` checks them (all errors, aggregated). */
const checkValues = (key: string, operator: Operator, values: ReadonlyArray<string>): Failure | undefined => {
  const errors: Array<string> = []
  if (operator === ">" || operator === "<") {
    values.forEach((v, i) => {
      if (!isInt64Text(v)) {
        errors.push(fieldError(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"))
      }
    })
  }
  values.forEach((v, i) => {
    const why = labelValueErrors(v)
    if (why.length > 0) errors.push(fieldError(`values[${i}][${key}]`, v, why.join("; ")))
  })
  const unique = [...new Set(errors)]
  if (unique.length === 0) return undefined
  return failure(unique.length === 1 ? unique[0]! : `[${unique.join(", ")}]`)
}

/**
 * Parses a selector as `labels.Parse` does; the error is the text kube-apiserver answers in its 400 (a
 * requirement's own errors prefixed `unable to parse requirement: `, its values' in field-error form,
 * `values[0][tier]: Invalid value: …`). Values of `in`/`notin` are a set: deduplicated and sorted.
 */
export const parse = (input: string): ParseResult => {
  const tokens = tokenize(input)
  let pos = 0
  const peek = (): Token => tokens[pos]!
  const next = (): Token => tokens[Math.min(pos++, tokens.length - 1)]!

  /** The values inside `( … )` up to (not including) the closing parenthesis; `(,`, `,,` and `,)` add "". */
  const identifiers = (values: Set<string>): Failure | undefined => {
    for (;;) {
      const t = next()
      if (t.kind === "id") {
        values.add(t.text)
        const after = peek()
        if (isOp(after, ")")) return undefined
        if (!isOp(after, ",")) return failure(`found '${after.text}', expected: ',' or ')'`)
      } else if (isOp(t, ",")) {
        if (values.size === 0) values.add("")
        const after = peek()
        if (isOp(after, ")")) {
          values.add("")
          return undefined
        }
        if (isOp(after, ",")) {
          next()
          values.add("")
        }
      } else return failure(`found '${t.text}', expected: ',', or identifier`)
    }
  }

  const values = (operator: Operator): Set<string> | Failure => {
    const out = new Set<string>()
    if (operator === "in" || operator === "notin") {
      const open = next()
      if (!isOp(open, "(")) return failure(`found '${open.text}' expected: '('`)
      const first = peek()
      if (isOp(first, ")")) {
        next()
        out.add("")
        return out
      }
      if (first.kind !== "id" && !isOp(first, ",")) {
        return failure(`found '${first.text}', expected: ',', ')' or identifier`)
      }
      const failed = identifiers(out)
      if (failed !== undefined) return failed
      next()
      return out
    }
    const v = peek()
    if (v.kind === "end" || isOp(v, ",")) out.add("")
    else if (v.kind === "id") out.add(next().text)
    else return failure(`found '${next().text}', expected: identifier`)
    return out
  }

  const requirement = (): Requirement | Failure => {
    let t = next()
    const negated = isOp(t, "!")
    if (negated) t = next()
    if (t.kind !== "id") return failure(`found '${t.text}', expected: identifier`)
    const key = t.text
    const keyErrors = labelKeyErrors(key)
    if (keyErrors.length > 0) return failure(fieldError("<nil>", key, keyErrors.join("; ")))
    const after = peek()
    if (negated || after.kind === "end" || isOp(after, ",")) {
      return { key, operator: negated ? "!" : "exists", values: [] }
    }
    const op = next()
    let operator: Operator
    if (op.kind === "id" && (op.text === "in" || op.text === "notin")) operator = op.text
    else if (isOp(op, "=") || isOp(op, "==")) operator = "="
    else if (isOp(op, "!=") || isOp(op, ">") || isOp(op, "<")) operator = op.text as Operator
    else return failure(`found '${op.text}', expected: in, notin, =, ==, !=, gt, lt`)
    const parsed = values(operator)
    if (isFailure(parsed)) return parsed
    const list = [...parsed].sort()
    return checkValues(key, operator, list) ?? { key, operator, values: list }
  }

  const requirements: Array<Requirement> = []
  for (;;) {
    const t = peek()
    if (t.kind === "end") return { _tag: "Ok", requirements }
    if (t.kind !== "id" && !isOp(t, "!")) {
      return { _tag: "Err", message: `found '${t.text}', expected: !, identifier, or 'end of string'` }
    }
    const r = requirement()
    if (isFailure(r)) return { _tag: "Err", message: `unable to parse requirement: ${r.why}` }
    requirements.push(r)
    const sep = next()
    if (sep.kind === "end") return { _tag: "Ok", requirements }
    if (!isOp(sep, ",")) return { _tag: "Err", message: `found '${sep.text}', expected: ',' or 'end of string'` }
    const following = peek()
    if (following.kind !== "id" && !isOp(following, "!")) {
      return { _tag: "Err", message: `found '${following.text}', expected: identifier after ','` }
    }
  }
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
