/**
 * The OpenAPI v2 document in protobuf, as kubectl asks for it (`Accept:
 * application/com.github.proto-openapi.spec.v2@v1.0+protobuf`; it uses it for client-side validation, e.g. of the
 * items of a `kind: List`). Messages are those of gnostic's `openapiv2/OpenAPIv2.proto` (package openapi.v2),
 * reduced to the fields we fill; the field numbers below are that file's. Vendor extensions and defaults travel as
 * YAML text (`Any.yaml`), as gnostic encodes them.
 */
import protobuf from "protobufjs"
import * as YAML from "yaml"
import type { Schema } from "./definitions.js"

const field = (id: number, type: string, rule?: "repeated") => (rule === undefined ? { id, type } : { id, type, rule })

const descriptor = {
  nested: {
    openapi: {
      nested: {
        v2: {
          nested: {
            Document: {
              fields: {
                swagger: field(1, "string"),
                info: field(2, "Info"),
                paths: field(8, "Paths"),
                definitions: field(9, "Definitions")
              }
            },
            Info: { fields: { title: field(1, "string"), version: field(2, "string") } },
            Paths: { fields: { vendorExtension: field(1, "NamedAny", "repeated") } },
            Definitions: { fields: { additionalProperties: field(1, "NamedSchema", "repeated") } },
            NamedSchema: { fields: { name: field(1, "string"), value: field(2, "Schema") } },
            NamedAny: { fields: { name: field(1, "string"), value: field(2, "Any") } },
            Any: { fields: { yaml: field(2, "string") } },
            TypeItem: { fields: { value: field(1, "string", "repeated") } },
            ItemsItem: { fields: { schema: field(1, "Schema", "repeated") } },
            Properties: { fields: { additionalProperties: field(1, "NamedSchema", "repeated") } },
            AdditionalPropertiesItem: {
              oneofs: { oneof: { oneof: ["schema", "boolean"] } },
              fields: { schema: field(1, "Schema"), boolean: field(2, "bool") }
            },
            Schema: {
              fields: {
                _ref: field(1, "string"),
                format: field(2, "string"),
                title: field(3, "string"),
                description: field(4, "string"),
                default: field(5, "Any"),
                multipleOf: field(6, "double"),
                maximum: field(7, "double"),
                exclusiveMaximum: field(8, "bool"),
                minimum: field(9, "double"),
                exclusiveMinimum: field(10, "bool"),
                maxLength: field(11, "int64"),
                minLength: field(12, "int64"),
                pattern: field(13, "string"),
                maxItems: field(14, "int64"),
                minItems: field(15, "int64"),
                uniqueItems: field(16, "bool"),
                maxProperties: field(17, "int64"),
                minProperties: field(18, "int64"),
                required: field(19, "string", "repeated"),
                enum: field(20, "Any", "repeated"),
                additionalProperties: field(21, "AdditionalPropertiesItem"),
                type: field(22, "TypeItem"),
                items: field(23, "ItemsItem"),
                properties: field(25, "Properties"),
                vendorExtension: field(31, "NamedAny", "repeated")
              }
            }
          }
        }
      }
    }
  }
}

let documentType: protobuf.Type | undefined

const yamlAny = (value: unknown) => ({ yaml: YAML.stringify(value) })

const numeric = ["multipleOf", "maximum", "minimum", "maxLength", "minLength", "maxItems", "minItems"] as const
const counts = ["maxProperties", "minProperties"] as const

/** A JSON schema (v2 form: `$ref` is `#/definitions/…`) as an `openapi.v2.Schema` object. */
const schemaMessage = (s: Schema): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  if (typeof s.$ref === "string") out._ref = s.$ref
  for (const key of ["format", "title", "description", "pattern"] as const) {
    if (typeof s[key] === "string") out[key] = s[key]
  }
  for (const key of [...numeric, ...counts]) if (typeof s[key] === "number") out[key] = s[key]
  for (const key of ["exclusiveMaximum", "exclusiveMinimum", "uniqueItems"] as const) {
    if (typeof s[key] === "boolean") out[key] = s[key]
  }
  if (s.default !== undefined) out.default = yamlAny(s.default)
  if (Array.isArray(s.required) && s.required.length > 0) out.required = s.required
  if (Array.isArray(s.enum)) out.enum = s.enum.map(yamlAny)
  if (typeof s.type === "string") out.type = { value: [s.type] }
  if (s.items !== null && typeof s.items === "object" && !Array.isArray(s.items)) {
    out.items = { schema: [schemaMessage(s.items)] }
  }
  if (s.properties !== null && typeof s.properties === "object") {
    out.properties = {
      additionalProperties: Object.entries(s.properties as Record<string, Schema>).map(([name, value]) => ({
        name,
        value: schemaMessage(value)
      }))
    }
  }
  if (typeof s.additionalProperties === "boolean") out.additionalProperties = { boolean: s.additionalProperties }
  else if (s.additionalProperties !== null && typeof s.additionalProperties === "object") {
    out.additionalProperties = { schema: schemaMessage(s.additionalProperties) }
  }
  const extensions = Object.entries(s).filter(([k]) => k.startsWith("x-"))
  if (extensions.length > 0) out.vendorExtension = extensions.map(([name, value]) => ({ name, value: yamlAny(value) }))
  return out
}

/** Encodes an OpenAPI v2 document (its info and definitions; paths are left empty) as gnostic's `Document`. */
export const encodeDocument = (doc: Schema): Uint8Array => {
  documentType ??= protobuf.Root.fromJSON(descriptor).lookupType("openapi.v2.Document")
  const message = {
    swagger: doc.swagger,
    info: doc.info,
    paths: {},
    definitions: {
      additionalProperties: Object.entries((doc.definitions ?? {}) as Record<string, Schema>).map(([name, value]) => ({
        name,
        value: schemaMessage(value)
      }))
    }
  }
  return documentType.encode(documentType.fromObject(message)).finish()
}
