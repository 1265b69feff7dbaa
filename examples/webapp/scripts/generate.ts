/** Writes examples/webapp/config/*.yaml from the code (`npm run generate -w examples/webapp`). */
import * as fs from "node:fs"
import * as path from "node:path"
import { files } from "../src/manifests.js"

const dir = path.join(import.meta.dirname, "..", "config")
fs.mkdirSync(dir, { recursive: true })
const wanted = files()
for (const name of fs.readdirSync(dir)) {
  if (name.endsWith(".yaml") && !(name in wanted)) {
    fs.rmSync(path.join(dir, name))
    console.log(`removed ${path.join("examples/webapp/config", name)}`)
  }
}
for (const [name, text] of Object.entries(wanted)) {
  fs.writeFileSync(path.join(dir, name), text)
  console.log(`wrote ${path.join("examples/webapp/config", name)}`)
}
