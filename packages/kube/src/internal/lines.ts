/**
 * Splits a stream of bytes into lines (a watch's body: one JSON event per line) without building strings the
 * lines do not need.
 *
 * A "\n" byte never occurs inside a UTF-8 sequence, so the bytes up to a chunk's last "\n" decode on their own: each
 * chunk is decoded once, from its first to its last line end, and its lines are slices of that text. Only a line
 * cut by the chunk's end is kept as bytes and joined with the head of the next chunk. No `TextDecoder` (its
 * streaming mode copies every chunk), no concatenation of whole chunks.
 *
 * @internal
 */
export class LineSplitter {
  /** The bytes after the last line end seen (a line cut by a chunk's end), if any. */
  private rest: Buffer | undefined = undefined

  /**
   * `segment`: the most bytes decoded into one string (unless one line is longer). V8 allocates strings past 128 KiB
   * in its large-object space, which costs several times their decoding (fresh pages), and a reader that fell
   * behind gets large chunks.
   */
  constructor(private readonly segment = 64 * 1024) {}

  /** Calls `line` with each line `chunk` completes, in order; blank lines are skipped. */
  push(chunk: Uint8Array, line: (text: string) => void): void {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    const first = bytes.indexOf(10)
    if (first < 0) {
      // no line end: the whole chunk belongs to the line in progress (copied, as the caller may reuse its buffer)
      this.rest = this.rest === undefined ? Buffer.from(bytes) : Buffer.concat([this.rest, bytes])
      return
    }
    let start = 0
    if (this.rest !== undefined) {
      emit(Buffer.concat([this.rest, bytes.subarray(0, first)]).toString("utf8"), line)
      this.rest = undefined
      start = first + 1
    }
    const last = bytes.lastIndexOf(10)
    while (start < last) {
      let end = last
      if (end - start > this.segment) {
        const cut = bytes.lastIndexOf(10, start + this.segment)
        end = cut > start ? cut : bytes.indexOf(10, start + this.segment)
      }
      const text = bytes.toString("utf8", start, end)
      let from = 0
      for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", from)) {
        emit(text.slice(from, at), line)
        from = at + 1
      }
      emit(from === 0 ? text : text.slice(from), line)
      start = end + 1
    }
    if (last + 1 < bytes.length) this.rest = Buffer.from(bytes.subarray(last + 1))
  }

  /** At the end of the stream: the last line, if it had no line end. */
  end(line: (text: string) => void): void {
    if (this.rest === undefined) return
    const text = this.rest.toString("utf8")
    this.rest = undefined
    emit(text, line)
  }
}

/** Passes on a line that is not blank (a JSON event starts with `{`: the common case costs one comparison). */
const emit = (text: string, line: (text: string) => void) => {
  if (text.charCodeAt(0) === 123 || text.trim() !== "") line(text)
}
