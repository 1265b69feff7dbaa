// The main job. Until the example operators exist (issue 7), it only says what
// Reconcile is and how to run the tests and benchmarks.
console.log(`Reconcile — a TypeScript runtime for Kubernetes controllers built on Effect.

The example operator that \`npm start\` will run on an embedded API server is not built yet.
What exists today:
  npm test                  typecheck + all tests
  npm run bench:workqueue   workqueue benchmark -> bench/results/workqueue.json
`)
