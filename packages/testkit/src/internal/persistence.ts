/**
 * The on-disk store of a `TestCluster` with a data directory: one SQLite
 * database (`node:sqlite`, built into Node ≥ 22.13: no dependency) holding
 * every stored object and the resourceVersion counter.
 *
 * - Each committed event (one object written or removed, at one new
 *   resourceVersion) is one SQLite transaction, made durable (WAL,
 *   `synchronous=FULL`: fsync at commit) before the core applies it in memory,
 *   delivers it to watches or answers the request. What is on disk is always
 *   a prefix of the event history; a crash loses only events nobody saw.
 * - The database is opened with an exclusive lock, held until close (and
 *   released by the kernel when the process dies): a second server on the same
 *   directory is refused instead of diverging.
 * - Opening checks the file (`PRAGMA quick_check`, its application id and
 *   format version, every stored object) and refuses a damaged one, naming it;
 *   a torn last transaction (a crash mid-commit) is dropped by SQLite's WAL
 *   checksums, as it was never acknowledged.
 */
import { mkdir, open as openFile, stat } from "node:fs/promises"
import * as Path from "node:path"
import type * as Sqlite from "node:sqlite"
import type { DatabaseSync, StatementSync } from "node:sqlite"
import { isObject, type Obj } from "./json.js"

/** The database file inside the data directory. */
export const FILE = "cluster.sqlite"

/** `PRAGMA application_id`: "RcTk", marks the file as ours. */
const APPLICATION_ID = 0x5263546b
/** `PRAGMA user_version`: the format of the tables below. */
const FORMAT = 1

const SCHEMA = `
CREATE TABLE counter (id INTEGER PRIMARY KEY CHECK (id = 1), rv INTEGER NOT NULL);
CREATE TABLE objects (storage TEXT NOT NULL, key TEXT NOT NULL, object TEXT NOT NULL, PRIMARY KEY (storage, key));
CREATE TABLE deleted (uid TEXT PRIMARY KEY) WITHOUT ROWID;
INSERT INTO counter (id, rv) VALUES (1, 0);
PRAGMA application_id = ${APPLICATION_ID};
PRAGMA user_version = ${FORMAT};
`

/** One stored object: its storage (`group/plural`), key (`namespace/name` or `name`) and content. */
export interface StoredObject {
  readonly storage: string
  readonly key: string
  readonly object: Obj
}

/** One committed event: an object written, or removed (then the uid it had). */
export type Change =
  | { readonly _tag: "Put"; readonly object: Obj }
  | { readonly _tag: "Remove"; readonly uid: string }

/** Makes committed events durable. `record` throws when the write failed (nothing was applied then). */
export interface Journal {
  /** Stores the change under storage/key and the counter `rv`, durably. */
  readonly record: (rv: number, storage: string, key: string, change: Change) => void
  readonly close: () => void
}

/** What the core restores from, and where it records from then on. */
export interface CoreStorage {
  /** The counter on disk: 0 for a new data directory. */
  readonly rv: number
  readonly objects: ReadonlyArray<StoredObject>
  /** Uids of removed objects (the garbage collector collects dependents of these owners only). */
  readonly deletedUids: ReadonlyArray<string>
  readonly journal: Journal
}

/** An opened data directory. */
export interface Opened extends CoreStorage {
  /** The database file. */
  readonly path: string
}

/** Why a data directory cannot be used. */
export interface OpenFailure {
  readonly _tag: "OpenFailure"
  readonly reason: "Locked" | "Corrupt" | "Unavailable" | "Unsupported"
  readonly path: string
  readonly detail: string
}

const failure = (reason: OpenFailure["reason"], path: string, detail: string): OpenFailure => ({
  _tag: "OpenFailure",
  reason,
  path,
  detail
})

/** Whether `u` is an {@link OpenFailure}. */
export const isOpenFailure = (u: unknown): u is OpenFailure => isObject(u) && u._tag === "OpenFailure"

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** SQLite's primary result code of an error thrown by `node:sqlite`, if it is one. */
const sqliteCode = (e: unknown): number | undefined =>
  isObject(e) && typeof e.errcode === "number" ? e.errcode & 0xff : undefined

/** An error of opening the database at `path` as the {@link OpenFailure} it means. */
export const classify = (path: string, e: unknown): OpenFailure => {
  if (isOpenFailure(e)) return e
  const code = sqliteCode(e)
  // SQLITE_BUSY, SQLITE_LOCKED
  if (code === 5 || code === 6) {
    return failure("Locked", path, "the database is locked: another server is using this data directory")
  }
  // SQLITE_CORRUPT, SQLITE_NOTADB
  if (code === 11 || code === 26) return failure("Corrupt", path, messageOf(e))
  return failure("Unavailable", path, messageOf(e))
}

const objKey = (namespace: unknown, name: string): string =>
  typeof namespace === "string" && namespace !== "" ? `${namespace}/${name}` : name

/** Checks one stored row; the reason it cannot be served again, or the object. */
const decodeRow = (row: Obj, counter: number): Obj | string => {
  const { key, object: text, storage } = row
  if (typeof storage !== "string" || !/^[^/]*\/[^/]+$/.test(storage)) return "invalid storage key"
  if (typeof key !== "string" || typeof text !== "string") return "invalid row"
  let object: unknown
  try {
    object = JSON.parse(text)
  } catch (e) {
    return `not JSON: ${messageOf(e)}`
  }
  if (!isObject(object) || !isObject(object.metadata)) return "not an object with metadata"
  const meta = object.metadata
  if (typeof meta.name !== "string" || meta.name === "") return "metadata.name missing"
  if (typeof meta.uid !== "string" || meta.uid === "") return "metadata.uid missing"
  if (typeof meta.resourceVersion !== "string" || !/^\d+$/.test(meta.resourceVersion)) {
    return "metadata.resourceVersion missing"
  }
  if (Number(meta.resourceVersion) > counter) {
    return `resourceVersion ${meta.resourceVersion} is ahead of the stored counter ${counter}`
  }
  if (objKey(meta.namespace, meta.name) !== key) return "its namespace/name do not match its key"
  return object
}

/** Makes the file exist with mode 0600 before SQLite opens it (SQLite gives its WAL the same mode). */
const createPrivate = async (path: string): Promise<void> => {
  try {
    await stat(path)
  } catch {
    const handle = await openFile(path, "wx", 0o600)
    await handle.close()
  }
}

const load = (
  db: DatabaseSync,
  path: string
): { readonly rv: number; readonly objects: Array<StoredObject>; readonly deletedUids: Array<string> } => {
  const check = db.prepare("PRAGMA quick_check").all().map((r) => String(Object.values(r)[0]))
  if (check.length !== 1 || check[0] !== "ok") throw failure("Corrupt", path, `quick_check: ${check.join("; ")}`)
  const appId = Number(db.prepare("PRAGMA application_id").get()?.application_id ?? 0)
  const version = Number(db.prepare("PRAGMA user_version").get()?.user_version ?? 0)
  const tables = db.prepare("SELECT count(*) AS n FROM sqlite_schema").get()?.n
  if (appId === 0 && version === 0 && tables === 0) {
    db.exec(`BEGIN IMMEDIATE; ${SCHEMA} COMMIT;`)
    return { rv: 0, objects: [], deletedUids: [] }
  }
  if (appId !== APPLICATION_ID) throw failure("Corrupt", path, "not a testkit data file (unknown application id)")
  if (version > FORMAT) {
    throw failure("Unsupported", path, `format ${version} was written by a newer testkit (this one reads ${FORMAT})`)
  }
  if (version !== FORMAT) throw failure("Corrupt", path, `unknown format ${version}`)
  const counter = db.prepare("SELECT rv FROM counter WHERE id = 1").get()?.rv
  if (typeof counter !== "number" || !Number.isSafeInteger(counter) || counter < 0) {
    throw failure("Corrupt", path, "the resourceVersion counter is missing")
  }
  const objects: Array<StoredObject> = []
  for (const row of db.prepare("SELECT storage, key, object FROM objects ORDER BY storage, key").iterate()) {
    const decoded = decodeRow(row, counter)
    if (typeof decoded === "string") {
      throw failure("Corrupt", path, `stored object ${String(row.storage)} ${String(row.key)}: ${decoded}`)
    }
    objects.push({ storage: row.storage as string, key: row.key as string, object: decoded })
  }
  const deletedUids = db.prepare("SELECT uid FROM deleted").all().map((row) => String(row.uid))
  return { rv: counter, objects, deletedUids }
}

const journalOf = (db: DatabaseSync): Journal => {
  const begin = db.prepare("BEGIN IMMEDIATE")
  const commit = db.prepare("COMMIT")
  const put = db.prepare(
    "INSERT INTO objects (storage, key, object) VALUES (?, ?, ?) ON CONFLICT (storage, key) DO UPDATE SET object = excluded.object"
  )
  const remove = db.prepare("DELETE FROM objects WHERE storage = ? AND key = ?")
  const tombstone = db.prepare("INSERT OR IGNORE INTO deleted (uid) VALUES (?)")
  const counter = db.prepare("UPDATE counter SET rv = ? WHERE id = 1")
  const run = (statement: StatementSync, ...args: Array<string | number>) => statement.run(...args)
  return {
    record: (rv, storage, key, change) => {
      run(begin)
      try {
        if (change._tag === "Remove") {
          run(remove, storage, key)
          run(tombstone, change.uid)
        } else {
          run(put, storage, key, JSON.stringify(change.object))
        }
        run(counter, rv)
        run(commit)
      } catch (e) {
        if (db.isTransaction) {
          try {
            db.exec("ROLLBACK")
          } catch {
            // the connection is unusable; the next record fails too
          }
        }
        throw e
      }
    },
    close: () => {
      if (db.isOpen) db.close()
    }
  }
}

/**
 * Opens (creating when missing) the data directory `dir`: loads every stored
 * object and the counter, and holds the database's lock until the journal is
 * closed. Rejects with an {@link OpenFailure} naming the file.
 */
export const open = async (dir: string): Promise<Opened> => {
  const path = Path.resolve(dir, FILE)
  let sqlite: typeof Sqlite
  try {
    sqlite = await import("node:sqlite")
  } catch (e) {
    throw failure("Unsupported", path, `node:sqlite is not available (Node >= 22.13 needed): ${messageOf(e)}`)
  }
  try {
    await mkdir(Path.resolve(dir), { recursive: true, mode: 0o700 })
    await createPrivate(path)
  } catch (e) {
    throw failure("Unavailable", path, messageOf(e))
  }
  let db: DatabaseSync | undefined
  try {
    db = new sqlite.DatabaseSync(path)
    // Exclusive before WAL: the lock is held for the connection's life and no shared-memory file is used.
    db.exec("PRAGMA locking_mode = EXCLUSIVE")
    const mode = db.prepare("PRAGMA journal_mode = WAL").get()?.journal_mode
    if (mode !== "wal") throw failure("Unavailable", path, `cannot use a write-ahead log (journal mode ${mode})`)
    db.exec("PRAGMA synchronous = FULL")
    const loaded = load(db, path)
    // A write takes the exclusive lock now, so a second server fails at open rather than at its first write.
    db.exec("BEGIN IMMEDIATE; UPDATE counter SET rv = rv WHERE id = 1; COMMIT;")
    return { path, ...loaded, journal: journalOf(db) }
  } catch (e) {
    try {
      db?.close()
    } catch {
      // already failing
    }
    throw classify(path, e)
  }
}
