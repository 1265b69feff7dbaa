#!/usr/bin/env node
/**
 * `npm create reconcile@latest my-operator`: writes a Reconcile operator
 * project (`create-reconcile <directory>`), adds a kind to one
 * (`create-reconcile api --kind Widget`) or a kind's webhooks
 * (`create-reconcile webhook --kind Widget --defaulting`). See
 * `create-reconcile --help`.
 *
 * Runs on the Node that npm runs on (18 or newer): plain Node APIs, no
 * dependencies.
 *
 * @since 0.1.0
 */
import { main } from "./internal/cli.js"

process.exitCode = main(process.argv.slice(2))
