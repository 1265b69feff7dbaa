/** Every scenario, by area. */
import type { Scenario } from "../scenario.js"
import { crd } from "./crd.js"
import { crud } from "./crud.js"
import { deletes } from "./delete.js"
import { lists } from "./lists.js"
import { meta } from "./meta.js"
import { patches } from "./patch.js"
import { subresources } from "./subresources.js"
import { validation } from "./validation.js"
import { watches } from "./watch.js"

export const scenarios: ReadonlyArray<Scenario> = [
  ...crud,
  ...patches,
  ...deletes,
  ...subresources,
  ...lists,
  ...watches,
  ...validation,
  ...crd,
  ...meta
]
