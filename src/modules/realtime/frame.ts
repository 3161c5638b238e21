/**
 * One message serialised once for every stream that receives it: the JSON text, and the bytes each
 * transport writes (built on first use and kept), so a visibility class of 5,000 streams costs one
 * JSON.stringify and one Buffer per transport, not 5,000 of each.
 */
export class Frame {
  private json: string | null = null
  private sseBytes: Buffer | null = null
  private wsBytes: Buffer | null = null

  constructor(
    readonly message: { readonly type: string },
    /** The SSE `id:` (one per write, the same on every instance). */
    readonly id: string,
  ) {}

  /** The message as JSON (a WebSocket text message's payload, an SSE event's `data:`). */
  text(): string {
    this.json ??= JSON.stringify(this.message)
    return this.json
  }

  /** The SSE event block: `id:`, `event:`, `data:` and the blank line. */
  sse(): Buffer {
    this.sseBytes ??= Buffer.from(`id: ${this.id}\nevent: ${this.message.type}\ndata: ${this.text()}\n\n`)
    return this.sseBytes
  }

  /** The WebSocket payload as UTF-8 bytes (ws frames it; the payload buffer is shared, not copied). */
  websocket(): Buffer {
    this.wsBytes ??= Buffer.from(this.text())
    return this.wsBytes
  }
}
