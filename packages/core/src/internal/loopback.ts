/**
 * Loopback addresses, for the debug servers that answer loopback clients only unless bound elsewhere
 * (`ProfilingServer`, `InspectorServer`). A module of its own: each server's internal module imports its public
 * module (for its error), so neither may import the other's.
 */
import * as Net from "node:net"

/** Whether an address is a loopback one: `127.0.0.0/8`, `::1` (also IPv4-mapped: `::ffff:127.0.0.1`), `localhost`. */
export const isLoopback = (address: string): boolean => {
  const a = address.toLowerCase().replace(/^\[|\]$/g, "")
  const v4 = a.startsWith("::ffff:") ? a.slice("::ffff:".length) : a
  return a === "localhost" || a === "::1" || (Net.isIPv4(v4) && v4.startsWith("127."))
}
