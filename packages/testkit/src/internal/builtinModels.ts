/**
 * The built-in object schemas, read from a maintained source: `@kubernetes/client-node`'s generated models (one class
 * per OpenAPI definition, generated from the Kubernetes OpenAPI spec). Each class carries `attributeTypeMap`
 * (property name, JSON name, TypeScript type, OpenAPI format), read from `dist/gen/models/<Class>.js` as the JSON
 * literal it is (importing the whole client takes seconds; a file read takes microseconds); its `.d.ts` carries the
 * descriptions and which properties are required (not optional). The `*Api.js` files name the models each API group
 * (de)serializes, which tells which package (`core`, `apps`, …) a nested model belongs to. Read on first use.
 */
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"

/** One property of a generated model. */
export interface ModelAttribute {
  readonly name: string
  readonly type: string
  readonly format: string
  readonly description: string | undefined
  readonly required: boolean
}

/** One generated model (`V1Pod`). */
export interface Model {
  readonly className: string
  readonly description: string | undefined
  readonly attributes: ReadonlyArray<ModelAttribute>
}

/** All generated models by class name, and the model names each API class uses (`CoreV1Api` → `V1Pod`, …). */
export interface Models {
  readonly get: (className: string) => Model | undefined
  readonly apiModels: (apiClass: string) => ReadonlyArray<string>
}

type AttributeTypeMap = ReadonlyArray<{ name: string; baseName: string; type: string; format: string }>

const unescape = (text: string): string => text.replace(/\\(['"\\])/g, "$1").replace(/\s*\n\s*\*?\s?/g, " ").trim()

/** Property descriptions and required-ness from a model's declaration file. */
const parseDeclaration = (
  source: string
): { readonly description: string | undefined; readonly props: Map<string, { doc?: string; required: boolean }> } => {
  const classAt = source.indexOf("export declare class")
  const head = source.slice(0, classAt)
  const classDoc = /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*$/.exec(head)
  const props = new Map<string, { doc?: string; required: boolean }>()
  const body = source.slice(classAt)
  const re = /(?:\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*)?'([^']+)'(\??):/g
  for (let m = re.exec(body); m !== null; m = re.exec(body)) {
    props.set(m[2]!, { ...(m[1] !== undefined ? { doc: unescape(m[1]) } : {}), required: m[3] !== "?" })
  }
  return { description: classDoc === null ? undefined : unescape(classDoc[1]!), props }
}

let loaded: Models | undefined

/**
 * The models of `@kubernetes/client-node` (read on demand and cached); throws when client-node is not installed.
 */
export const load = (): Models => {
  loaded ??= (() => {
    const require = createRequire(import.meta.url)
    const main = require.resolve("@kubernetes/client-node")
    const gen = Path.join(Path.dirname(main), "gen")
    const cache = new Map<string, Model | undefined>()
    const read = (file: string): string | undefined => {
      try {
        return Fs.readFileSync(file, "utf8")
      } catch {
        return undefined
      }
    }
    const attributeTypeMap = (className: string): AttributeTypeMap | undefined => {
      const source = read(Path.join(gen, "models", `${className}.js`))
      const start = source?.indexOf(`${className}.attributeTypeMap = [`) ?? -1
      if (source === undefined || start < 0) return undefined
      const from = source.indexOf("[", start)
      const to = source.indexOf("\n];", from)
      try {
        return JSON.parse(source.slice(from, to + 2)) as AttributeTypeMap
      } catch {
        return undefined
      }
    }
    const get = (className: string): Model | undefined => {
      if (cache.has(className)) return cache.get(className)
      const map = /^[A-Za-z0-9]+$/.test(className) ? attributeTypeMap(className) : undefined
      let model: Model | undefined
      if (map !== undefined) {
        const source = read(Path.join(gen, "models", `${className}.d.ts`))
        const declared = source === undefined ? undefined : parseDeclaration(source)
        model = {
          className,
          description: declared?.description,
          attributes: map.map((a) => {
            const prop = declared?.props.get(a.name)
            // The generator puts the type's own description on some properties (IntOrString, MicroTime): not theirs.
            const typeName = a.type.replace(/^V\d+/, "")
            const description = prop?.doc?.startsWith(`${typeName} is`) === true ? undefined : prop?.doc
            return {
              name: a.baseName,
              type: a.type,
              format: a.format,
              description,
              required: prop?.required ?? false
            }
          })
        }
      }
      cache.set(className, model)
      return model
    }
    const apiCache = new Map<string, ReadonlyArray<string>>()
    const apiModels = (apiClass: string): ReadonlyArray<string> => {
      const cached = apiCache.get(apiClass)
      if (cached !== undefined) return cached
      const source = /^[A-Za-z0-9]+$/.test(apiClass) ? read(Path.join(gen, "apis", `${apiClass}.js`)) : undefined
      const names = source === undefined
        ? []
        : [...new Set([...source.matchAll(/"([A-Z][A-Za-z0-9]*)"/g)].map((m) => m[1]!))].filter((n) =>
          get(n) !== undefined
        )
      apiCache.set(apiClass, names)
      return names
    }
    return { get, apiModels }
  })()
  return loaded
}
