/**
 * The virtual modules of docs/vitest.config.ts: the documentation's code, extracted when loaded.
 */
declare module "readme:greeting" {
  import type { Cache, KubeClient, Resource } from "@reconcile/kube"
  import type { Layer } from "effect"
  /** The README's `Greeting` resource. */
  export const Greeting: Resource.CustomResource<{ readonly message: string }, { readonly message: string }>
  /** The README's controller (the Manager not included). */
  export const GreetingController: Layer.Layer<never, never, KubeClient.KubeClient | Cache.Cache>
}

/** The README's test: importing it registers it in the current suite. */
declare module "readme:testing" {}

/** Every Markdown block that is a test (but the README's), run: each registers in a `describe` of its own. */
declare module "docs:examples" {
  /** The blocks, as `file:line`. */
  export const examples: ReadonlyArray<string>
}
