/**
 * Query parameters read as kube-apiserver reads them: apimachinery's parameter codec converts `url.Values` into
 * `metav1.ListOptions`, `CreateOptions`, `UpdateOptions`, `PatchOptions` and `DeleteOptions` (a failed conversion is
 * a 400 BadRequest carrying Go's `strconv` message), then the options are validated (a 422 Invalid of kind
 * `<X>Options.meta.k8s.io`). Parameters a handler does not know are ignored, as upstream.
 */
import * as ApiError from "../../ApiError.js"
import { isObject, type Obj } from "../json.js"
import { badRequest } from "../statuses.js"

/** How the server treats unknown fields in a request body (`fieldValidation`; absent means Warn, as upstream). */
export type FieldValidation = "Ignore" | "Warn" | "Strict"

/**
 * A boolean parameter (apimachinery `Convert_Slice_string_To_bool`): absent is unset; "0" or "false" in any case
 * is false; anything else — "true", "True" (Python's client), "1", "" — true.
 */
export const bool = (value: string | null): boolean | undefined =>
  value === null ? undefined : !(value === "0" || value.toLowerCase() === "false")

const INT64_MAX = 9223372036854775807n
const INT64_MIN = -9223372036854775808n

/** Go's `%q` of a string, close enough for error messages (ASCII is rendered the same). */
const quote = (s: string): string => JSON.stringify(s)

/**
 * An int64 parameter as Go's `strconv.ParseInt(s, 10, 64)` reads it: an optional sign and decimal digits; anything
 * else (the empty string too) is a 400 with strconv's message. Absent is `undefined`.
 */
export const int64 = (value: string | null): number | undefined => {
  if (value === null) return undefined
  if (!/^[+-]?\d+$/.test(value)) throw badRequest(`strconv.ParseInt: parsing ${quote(value)}: invalid syntax`)
  const n = BigInt(value)
  if (n > INT64_MAX || n < INT64_MIN) throw badRequest(`strconv.ParseInt: parsing ${quote(value)}: value out of range`)
  return Number(n)
}

/**
 * Whether the response is indented (`pretty`, read with Go's `strconv.ParseBool`, an invalid value is false; without
 * the parameter, curl, Wget and browsers get indented output), as kube-apiserver's content negotiation decides.
 */
export const pretty = (params: URLSearchParams, userAgent: string | undefined): boolean => {
  const value = params.get("pretty")
  if (value !== null && value !== "") return ["1", "t", "T", "TRUE", "true", "True"].includes(value)
  const agent = userAgent ?? ""
  return agent.startsWith("curl") || agent.startsWith("Wget") || agent.startsWith("Mozilla/5.0")
}

interface FieldError {
  readonly reason:
    | "FieldValueNotSupported"
    | "FieldValueInvalid"
    | "FieldValueForbidden"
    | "FieldValueRequired"
    | "FieldValueTooLong"
  readonly field: string
  readonly body: string
}

/** A list value as 1.36's field errors print it: JSON (1.32 printed Go's `%#v`, `[]string{"Some"}`). */
const jsonValue = (values: ReadonlyArray<string>): string => JSON.stringify(values)

const notSupported = (field: string, value: string, supported: ReadonlyArray<string>): FieldError => ({
  reason: "FieldValueNotSupported",
  field,
  body: `Unsupported value: ${value}: supported values: ${supported.map(quote).join(", ")}`
})

/** The 422 of invalid options (`errors.NewInvalid(meta.k8s.io/<Kind>, "", errs)`). */
const invalidOptions = (kind: string, errors: ReadonlyArray<FieldError>): ApiError.ApiError => {
  const text = errors.map((e) => `${e.field}: ${e.body}`)
  return ApiError.make(
    422,
    "Invalid",
    `${kind}.meta.k8s.io "" is invalid: ${text.length === 1 ? text[0] : `[${text.join(", ")}]`}`,
    { group: "meta.k8s.io", kind, causes: errors.map((e) => ({ reason: e.reason, message: e.body, field: e.field })) }
  )
}

const dryRunErrors = (values: ReadonlyArray<string>): Array<FieldError> =>
  values.every((v) => v === "All") ? [] : [notSupported("dryRun", jsonValue(values), ["All"])]

const fieldValidationErrors = (value: string | null): Array<FieldError> =>
  value === null || ["", "Ignore", "Warn", "Strict"].includes(value)
    ? []
    : [notSupported("fieldValidation", quote(value), ["", "Ignore", "Strict", "Warn"])]

/**
 * `fieldManager` (`ValidateFieldManager`): at most 128 bytes, printable characters only; the empty string is unset.
 */
const fieldManagerErrors = (value: string | null): Array<FieldError> => {
  if (value === null || value === "") return []
  const out: Array<FieldError> = []
  if (Buffer.byteLength(value, "utf8") > 128) {
    out.push({ reason: "FieldValueTooLong", field: "fieldManager", body: "Too long: may not be more than 128 bytes" })
  }
  let position = 0
  for (const ch of value) {
    if (/[\p{C}\p{Z}]/u.test(ch) && ch !== " ") {
      const code = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")
      out.push({
        reason: "FieldValueInvalid",
        field: "fieldManager",
        body: `Invalid value: ${quote(value)}: invalid character U+${code} (at position ${position})`
      })
    }
    position += Buffer.byteLength(ch, "utf8")
  }
  return out
}

const validationOf = (value: string | null): FieldValidation =>
  value === null || value === "" ? "Warn" : (value as FieldValidation)

/** The options of a create, update or patch. */
export interface WriteQuery {
  readonly dryRun: boolean
  readonly fieldManager: string | undefined
  readonly fieldValidation: FieldValidation
}

/** `CreateOptions` / `UpdateOptions` from the query (422 `CreateOptions.meta.k8s.io "" is invalid: …` when bad). */
export const writeOptions = (params: URLSearchParams, kind: "CreateOptions" | "UpdateOptions"): WriteQuery => {
  const errors = [
    ...fieldManagerErrors(params.get("fieldManager")),
    ...dryRunErrors(params.getAll("dryRun")),
    ...fieldValidationErrors(params.get("fieldValidation"))
  ]
  if (errors.length > 0) throw invalidOptions(kind, errors)
  return {
    dryRun: params.getAll("dryRun").length > 0,
    fieldManager: params.get("fieldManager") ?? undefined,
    fieldValidation: validationOf(params.get("fieldValidation"))
  }
}

/** `PatchOptions` from the query: also `force` (only with apply) and `fieldManager` (required with apply). */
export const patchOptions = (
  params: URLSearchParams,
  apply: boolean
): WriteQuery & { readonly force: boolean | undefined } => {
  const force = bool(params.get("force"))
  const errors: Array<FieldError> = []
  const manager = params.get("fieldManager")
  if (apply && (manager === null || manager === "")) {
    errors.push({
      reason: "FieldValueRequired",
      field: "fieldManager",
      body: "Required value: is required for apply patch"
    })
  }
  if (!apply && force !== undefined) {
    errors.push({
      reason: "FieldValueForbidden",
      field: "force",
      body: "Forbidden: may not be specified for non-apply patch"
    })
  }
  const all = [
    ...errors,
    ...fieldManagerErrors(manager),
    ...dryRunErrors(params.getAll("dryRun")),
    ...fieldValidationErrors(params.get("fieldValidation"))
  ]
  if (all.length > 0) throw invalidOptions("PatchOptions", all)
  return {
    dryRun: params.getAll("dryRun").length > 0,
    fieldManager: manager ?? undefined,
    fieldValidation: validationOf(params.get("fieldValidation")),
    force
  }
}

/** The options of a delete, from its body (a `DeleteOptions`) or, without a body, from the query. */
export interface DeleteQuery {
  readonly dryRun: boolean
  readonly propagationPolicy: "Background" | "Foreground" | "Orphan" | undefined
  readonly orphanDependents: boolean | undefined
  readonly gracePeriodSeconds: number | undefined
  readonly preconditions:
    | { readonly uid?: string | undefined; readonly resourceVersion?: string | undefined }
    | undefined
}

const policies = ["Foreground", "Background", "Orphan"]

/**
 * `DeleteOptions` as the delete handler reads them: a non-empty body is the options (query parameters are then not
 * read), otherwise the query; then `ValidateDeleteOptions` (a 422 `DeleteOptions.meta.k8s.io "" is invalid: …`).
 */
export const deleteOptions = (params: URLSearchParams, body: unknown): DeleteQuery => {
  let dryRun: ReadonlyArray<string>
  let policy: unknown
  let orphan: unknown
  let grace: number | undefined
  let preconditions: DeleteQuery["preconditions"]
  if (body !== undefined) {
    if (!isObject(body)) throw badRequest("the body of the request was not a DeleteOptions object")
    const opts: Obj = body
    dryRun = Array.isArray(opts.dryRun) ? opts.dryRun.map(String) : []
    policy = opts.propagationPolicy ?? undefined
    orphan = opts.orphanDependents ?? undefined
    grace = typeof opts.gracePeriodSeconds === "number" ? opts.gracePeriodSeconds : undefined
    preconditions = isObject(opts.preconditions) ? opts.preconditions : undefined
  } else {
    dryRun = params.getAll("dryRun")
    policy = params.get("propagationPolicy") ?? undefined
    orphan = bool(params.get("orphanDependents"))
    grace = int64(params.get("gracePeriodSeconds"))
    // preconditions only travel in a body: they are not a query parameter of DeleteOptions
    preconditions = undefined
  }
  const errors: Array<FieldError> = []
  if (orphan !== undefined && policy !== undefined) {
    errors.push({
      reason: "FieldValueInvalid",
      field: "propagationPolicy",
      body: `Invalid value: ${quote(String(policy))}: orphanDependents and deletionPropagation cannot be both set`
    })
  }
  if (policy !== undefined && !policies.includes(policy as string)) {
    errors.push(notSupported("propagationPolicy", quote(String(policy)), [...policies, "nil"]))
  }
  const all = [...errors, ...dryRunErrors(dryRun)]
  if (all.length > 0) throw invalidOptions("DeleteOptions", all)
  return {
    dryRun: dryRun.length > 0,
    propagationPolicy: policy as DeleteQuery["propagationPolicy"],
    orphanDependents: orphan === undefined ? undefined : orphan === true,
    gracePeriodSeconds: grace,
    preconditions
  }
}

/** The `Warning` header value of one warning (`299 - "<text>"`, as kube-apiserver writes it). */
export const warningHeader = (text: string): string => `299 - ${JSON.stringify(text)}`

const forbidden = (field: string, detail: string): FieldError => ({
  reason: "FieldValueForbidden",
  field,
  body: `Forbidden: ${detail}`
})

/**
 * `ListOptions` of a list, watch or deletecollection: the integers are decoded (a 400 when bad), then
 * `ValidateListOptions` (a 422 `ListOptions.meta.k8s.io "" is invalid: …`): `resourceVersionMatch` needs a
 * `resourceVersion` and no `continue` on a list; on a watch it goes with `sendInitialEvents` (the watch-list),
 * which requires `NotOlderThan`; a list may not ask for `sendInitialEvents`.
 */
export const listOptions = (
  params: URLSearchParams,
  watch: boolean
): { readonly limit: number | undefined; readonly timeoutSeconds: number | undefined } => {
  const limit = int64(params.get("limit"))
  const timeoutSeconds = int64(params.get("timeoutSeconds"))
  const match = params.get("resourceVersionMatch") ?? ""
  const rv = params.get("resourceVersion") ?? ""
  const cont = params.get("continue") ?? ""
  const initial = params.get("sendInitialEvents")
  const errors: Array<FieldError> = []
  if (watch) {
    if (initial !== null && match !== "NotOlderThan") {
      errors.push(
        forbidden("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
      )
    }
    if (match !== "") {
      if (initial === null) {
        errors.push(
          forbidden(
            "resourceVersionMatch",
            "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
          )
        )
      }
      if (match !== "NotOlderThan") errors.push(notSupported("resourceVersionMatch", quote(match), ["NotOlderThan"]))
      if (cont !== "") {
        errors.push(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
      }
    }
  } else {
    if (match !== "") {
      if (rv === "") {
        errors.push(
          forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided")
        )
      }
      if (cont !== "") {
        errors.push(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
      }
      if (match !== "Exact" && match !== "NotOlderThan") {
        errors.push(notSupported("resourceVersionMatch", quote(match), ["Exact", "NotOlderThan", ""]))
      }
      if (match === "Exact" && rv === "0") {
        errors.push(
          forbidden("resourceVersionMatch", "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"")
        )
      }
    }
    if (initial !== null) errors.push(forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
  }
  if (errors.length > 0) throw invalidOptions("ListOptions", errors)
  return { limit, timeoutSeconds }
}
