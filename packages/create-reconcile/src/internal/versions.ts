/**
 * The versions a scaffolded project installs besides our packages (whose range
 * is `^` this package's own version). They follow the repository's root
 * `package.json` (a test keeps them in step).
 */

/** The runtime dependencies besides `@reconcile/*`: Effect, as a published package asks for it (a peer range). */
export const dependencies: Readonly<Record<string, string>> = {
  effect: "^4.1.0",
  "@effect/platform-node": "^4.1.0"
}

/**
 * The development dependencies besides `@reconcile/testkit` and `create-reconcile`. `node` is the Node 24 the
 * npm scripts run on (npm puts its binary first on PATH), even where the machine has an older Node.
 */
export const devDependencies: Readonly<Record<string, string>> = {
  "@effect/vitest": "^4.0.5",
  "@types/node": "^24.19.4",
  node: "24.21.0",
  tsx: "^4.23.15",
  typescript: "^5.9.3",
  vitest: "^5.1.2"
}

/** Packages whose install scripts npm may run (the `node` binary's download; esbuild, tsx's compiler). */
export const allowScripts: Readonly<Record<string, boolean>> = { node: true, esbuild: true }
