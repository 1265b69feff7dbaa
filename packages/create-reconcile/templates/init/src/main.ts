/**
 * The main job. `npm start` runs the operator on an embedded Kubernetes API
 * server (in memory, HTTPS on 127.0.0.1) with its CRDs installed and the
 * samples below applied; `npm start -- --kubeconfig PATH` (or `--context NAME`)
 * runs it against a real cluster; in a pod the Deployment passes
 * `--in-cluster`. `npm start -- --help` lists the flags.
 */
import { Main } from "@reconcile/cli"
import { __kind__Sample } from "./__Kind__.js"
import { operator } from "./operator.js"
// create-reconcile api: imports

Main.run(operator, {
  samples: (namespace) => [
    __kind__Sample(namespace),
    // create-reconcile api: samples
  ]
})
