import { it } from "@effect/vitest"
it("placeholder", () => {})
