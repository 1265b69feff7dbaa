import * as W from "@reconcile/workqueue"
console.log(W)
