#!/usr/bin/env node
/**
 * The `reconcile` command: `reconcile manifests [--entry src/operator.ts] [--export NAME] [--out DIR | -o FILE]
 * [--image IMG] [--namespace NS] [--replicas N]` writes the YAML an operator needs in a cluster (see
 * `reconcile manifests --help`); `reconcile --completions bash|zsh|fish|powershell` prints its shell completions.
 * Exit codes: 0 written, 1 the entry or the operator is unusable, 2 invalid options.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { main } from "../internal/manifestsCommand.js"

// The imported entry may hold timers or sockets open: exit once the output is written.
Effect.runPromise(main(process.argv.slice(2))).then(
  (code) => process.exit(code),
  (error) => {
    console.error(`error: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
)
