/**
 * The virtual modules of docs/vitest.config.ts: the documentation's code, extracted when loaded.
 */
declare module "readme:greeting" {
  import type { KubeClient, KubeController, Resource } from "@reconcile/kube"
  /** The README's `Greeting` resource. */
  export const Greeting: Resource.CustomResource<{ readonly message: string }, { readonly message: string }>
  /** The README's controller, a value (its Layer requires the Manager and the Cache). */
  export const GreetingController: KubeController.KubeController<never, KubeClient.KubeClient>
}

/** The README's test: importing it registers it in the current suite. */
declare module "readme:testing" {}

/** Every Markdown block that is a test (but the README's), run: each registers in a `describe` of its own. */
declare module "docs:examples" {
  /** The blocks, as `file:line`. */
  export const examples: ReadonlyArray<string>
}
