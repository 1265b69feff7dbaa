/**
 * The fields of an object its kind does not declare. Custom resources: the fields pruning would drop (their
 * structural schema); built-in kinds: the fields `@kubernetes/client-node`'s generated models (the upstream OpenAPI)
 * do not list — when that package cannot be loaded, built-in kinds report none. The write path drops them from
 * built-in objects (as kube-apiserver's typed decoder does) and refuses apply configurations holding them (as
 * structured-merge-diff does); the HTTP server's `fieldValidation` reports them.
 */
import * as ApiError from "../ApiError.js"
import type { ResourceType } from "../ResourceType.js"
import * as Models from "./builtinModels.js"
import { isObject, type Obj } from "./json.js"
import { isBuiltinGroup } from "./resourceType.js"
import * as Structural from "./structural.js"

/** The client-node model of a built-in kind (`V1Deployment`, `CoreV1Event`, `EventsV1Event`). */
const modelName = (rt: ResourceType): string => {
  const version = `${rt.version.charAt(0).toUpperCase()}${rt.version.slice(1)}`
  if (rt.kind === "Event") return rt.group === "" ? `CoreV1Event` : `EventsV1Event`
  return `${version}${rt.kind}`
}

let models: Models.Models | null | undefined

const loadModels = (): Models.Models | null => {
  if (models === undefined) {
    try {
      models = Models.load()
    } catch {
      models = null
    }
  }
  return models
}

/** A built-in kind's model, when its fields are checked against one (not custom resources, reviews, or CRD kinds). */
const builtinModel = (rt: ResourceType): { readonly models: Models.Models; readonly name: string } | undefined => {
  if (rt.schema !== undefined) return undefined
  if (rt.createOnly === true || rt.printerColumns.length > 0 || !isBuiltinGroup(rt.group)) return undefined
  const m = loadModels()
  const name = modelName(rt)
  return m === null || m.get(name) === undefined ? undefined : { models: m, name }
}

/** A model's attributes by JSON name (every built-in write walks them). */
const attributeMaps = new WeakMap<Models.Model, ReadonlyMap<string, Models.ModelAttribute>>()
const attributesOf = (model: Models.Model): ReadonlyMap<string, Models.ModelAttribute> => {
  let map = attributeMaps.get(model)
  if (map === undefined) {
    map = new Map(model.attributes.map((a) => [a.name, a]))
    attributeMaps.set(model, map)
  }
  return map
}

const arrayOf = /^Array<(.+)>$/
const mapOf = /^\{ \[key: string\]: (.+); \}$/

const walk = (
  m: Models.Models,
  type: string,
  value: unknown,
  path: string,
  out: Array<string>,
  prune = false
): void => {
  const array = arrayOf.exec(type)
  if (array !== null) {
    if (Array.isArray(value)) value.forEach((v, i) => walk(m, array[1]!, v, `${path}[${i}]`, out, prune))
    return
  }
  const map = mapOf.exec(type)
  if (map !== null) {
    if (isObject(value)) {
      for (const [k, v] of Object.entries(value)) walk(m, map[1]!, v, `${path}[${k}]`, out, prune)
    }
    return
  }
  const model = m.get(type)
  if (model === undefined || !isObject(value)) return
  const attributes = attributesOf(model)
  for (const [key, v] of Object.entries(value)) {
    const attribute = attributes.get(key)
    const at = path === "" ? key : `${path}.${key}`
    if (attribute === undefined) {
      out.push(at)
      if (prune) delete value[key]
    } else walk(m, attribute.type, v, at, out, prune)
  }
}

/** The paths of the fields of `body` that `rt` does not declare (`spec.foo`, `spec.containers[0].bar`). */
export const undeclaredFields = (rt: ResourceType, body: unknown): Array<string> => {
  if (!isObject(body)) return []
  if (rt.schema !== undefined) return Structural.unknownFields(rt, body)
  const builtin = builtinModel(rt)
  if (builtin === undefined) return []
  const out: Array<string> = []
  walk(builtin.models, builtin.name, body, "", out)
  return out
}

/**
 * Drops from a built-in object the fields its kind does not declare, as kube-apiserver's decoder does for typed
 * kinds whatever `fieldValidation` says (custom resources are pruned by their structural schema instead), so that
 * neither the stored object nor its managedFields name them. Mutates `body`.
 */
export const pruneUndeclared = (rt: ResourceType, body: Obj): void => {
  const builtin = builtinModel(rt)
  if (builtin !== undefined) walk(builtin.models, builtin.name, body, "", [], true)
}

/**
 * A path of ours (`spec.template.spec.containers[0].bar`) as structured-merge-diff prints it: fields and map
 * entries as `.name`, items of associative lists by their keys (`[name="web"]`, `[containerPort=80,protocol="TCP"]`),
 * of sets by value (`[="a"]`), other items by index (`[0]`).
 */
const smdPath = (rt: ResourceType, root: unknown, path: string): string => {
  let out = ""
  let value: unknown = root
  let schemaPath = ""
  for (const m of path.matchAll(/\.?([^.[\]]+)|\[([^\]]*)\]/g)) {
    const segment = m[1] ?? m[2] ?? ""
    if (m[2] !== undefined && Array.isArray(value)) {
      const item: unknown = value[Number(segment)]
      const keys = rt.listKeys.get(schemaPath)
      if (keys !== undefined && keys.length === 0) out += `[=${JSON.stringify(item)}]`
      else if (keys !== undefined && isObject(item)) {
        out += `[${
          [...keys].sort().map((k) => `${k}=${JSON.stringify(item[k] ?? (k === "protocol" ? "TCP" : null))}`)
        }]`
      } else out += `[${segment}]`
      value = item
      schemaPath += "[]"
    } else {
      out += `.${segment}`
      value = isObject(value) ? value[segment] : undefined
      // map entries keep the map's schema path, as the walkers' `[key]` segments do
      if (m[2] === undefined) schemaPath = schemaPath === "" ? segment : `${schemaPath}.${segment}`
    }
  }
  return out
}

/**
 * Refuses an apply configuration holding fields its kind does not declare, as kube-apiserver does whatever
 * `fieldValidation` says (structured-merge-diff cannot type it; `fieldValidation` only governs duplicate YAML keys
 * for apply): a 500 with no reason, `failed to create typed patch object (<ns>/<name>; <group>/<version>,
 * Kind=<Kind>): .spec.foo: field not declared in schema`. structured-merge-diff stops at the first undeclared field
 * of each object, so one path per parent is named; several are listed under `errors:`.
 */
export const checkApply = (rt: ResourceType, config: unknown): void => {
  const paths = undeclaredFields(rt, config)
  if (paths.length === 0) return
  const parents = new Set<string>()
  const first = paths.filter((p) => {
    const parent = p.replace(/(\.[^.[\]]*|\[[^\]]*\])$/, "")
    if (parents.has(parent)) return false
    parents.add(parent)
    return true
  })
  const errors = first.map((p) => `${smdPath(rt, config, p)}: field not declared in schema`)
  const detail = errors.length === 1 ? errors[0]! : ["errors:", ...errors.map((e) => `  ${e}`)].join("\n")
  const gvk = `${rt.group}/${rt.version}, Kind=${rt.kind}`
  const meta = isObject(config) && isObject(config.metadata) ? config.metadata : {}
  // The namespace and name as the configuration itself holds them (upstream names the patch object).
  const ns = typeof meta.namespace === "string" ? meta.namespace : ""
  const objName = typeof meta.name === "string" ? meta.name : ""
  throw ApiError.make(500, "", `failed to create typed patch object (${ns}/${objName}; ${gvk}): ${detail}`)
}
