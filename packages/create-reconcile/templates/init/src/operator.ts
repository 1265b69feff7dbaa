/**
 * The operator as one value: its name, the custom resources it serves and its
 * controllers. `npm start` runs it (src/main.ts) and `npm run manifests` turns
 * it into the YAML a cluster needs (CRDs, least-privilege RBAC computed from
 * what the controllers declare, ServiceAccount, Deployment). `controllers` are
 * what the manifests are computed from; `layer` is what runs: each
 * controller's Layer, with the services it needs.
 *
 * `npx create-reconcile api --kind Widget` adds a kind here, at the
 * `create-reconcile api` markers; `npx create-reconcile webhook --kind
 * __Kind__ --defaulting --validation` (or `--conversion`) adds a kind's
 * webhooks to `webhooks`, at the `create-reconcile webhook` markers. Without
 * any, the operator serves no webhook.
 */
import { Operator } from "@reconcile/kube"
import { Layer } from "effect"
import { __Kind__ } from "./__Kind__.js"
import * as __Kind__Controller from "./__controller__.js"
// create-reconcile api: imports

export const operator = Operator.make({
  name: "__name__",
  resources: [
    __Kind__,
    // create-reconcile api: resources
  ],
  controllers: [
    __Kind__Controller.controller,
    // create-reconcile api: controllers
  ],
  layer: Layer.mergeAll(
    __Kind__Controller.layer,
    // create-reconcile api: layers
  ),
  webhooks: {
    admission: [
      // create-reconcile webhook: admission
    ],
    conversion: [
      // create-reconcile webhook: conversion
    ]
  }
})
