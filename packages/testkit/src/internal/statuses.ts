/**
 * The Status errors of the storage, worded and detailed as kube-apiserver's generic registry words them
 * (`configmaps "a" not found`, `deployments.apps "web" already exists`): shared by the storage, the write path,
 * deletion and the HTTP server's request parsing.
 */
import * as ApiError from "../ApiError.js"
import type { ResourceType } from "../ResourceType.js"

/** A resource as a Status message names it: `configmaps`, `deployments.apps`. */
export const qualified = (rt: ResourceType): string => (rt.group === "" ? rt.plural : `${rt.plural}.${rt.group}`)

/** The group of a Status's details; an empty group is left out, as Go's omitempty leaves it out on the wire. */
export const groupOf = (rt: ResourceType): { readonly group?: string } => (rt.group === "" ? {} : { group: rt.group })

/** A Status's details naming one object. */
export const details = (rt: ResourceType, name: string) => ({ name, ...groupOf(rt), kind: rt.plural })

/** 404 NotFound for an object. */
export const notFound = (rt: ResourceType, name: string): ApiError.ApiError =>
  ApiError.make(404, "NotFound", `${qualified(rt)} "${name}" not found`, details(rt, name))

/** 400 BadRequest. */
export const badRequest = (message: string): ApiError.ApiError => ApiError.make(400, "BadRequest", message)

/** 410 Expired (a compacted resourceVersion or continue token). */
export const expired = (message: string): ApiError.ApiError => ApiError.make(410, "Expired", message)

/** 409 Conflict for a write from a stale resourceVersion. */
export const conflict = (rt: ResourceType, name: string): ApiError.ApiError =>
  ApiError.make(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${
      qualified(rt)
    } "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    details(rt, name)
  )
