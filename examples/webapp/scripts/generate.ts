/** Writes examples/webapp/config/ (YAML, the dashboard JSON) from the code (`npm run generate -w examples/webapp`). */
import * as fs from "node:fs"
import * as path from "node:path"
import { files } from "../src/manifests.js"

const dir = path.join(import.meta.dirname, "..", "config")
fs.mkdirSync(dir, { recursive: true })
const wanted = files()
/** The generated files under config/ now: the YAML and JSON files, in config/ and its subdirectories. */
const existing = (fs.readdirSync(dir, { recursive: true }) as Array<string>).filter((name) =>
  /\.(yaml|json)$/.test(name)
)
for (const name of existing) {
  if (!(name in wanted)) {
    fs.rmSync(path.join(dir, name))
    console.log(`removed ${path.join("examples/webapp/config", name)}`)
  }
}
for (const [name, text] of Object.entries(wanted)) {
  fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
  fs.writeFileSync(path.join(dir, name), text)
  console.log(`wrote ${path.join("examples/webapp/config", name)}`)
}
