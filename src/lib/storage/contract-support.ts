import { createHash } from 'node:crypto'
import type { Readable } from 'node:stream'
import { systemClock, type Clock } from '../clock.js'
import type { ObjectStorage } from './types.js'

/** One driver under test, set up against a real peer (a Plinth server for local, an S3 store for s3). */
export interface StorageFixture {
  readonly storage: ObjectStorage
  /** Moves the clock the driver signs URLs with by `offsetMs` from real time (0 puts it back); the peer keeps real time. */
  shiftClock(offsetMs: number): void
  close(): Promise<void>
}

/** What each capability group of the contract is handed: the driver and its fixture once set up, and fresh keys. */
export interface StorageContractContext {
  /** The driver under test; set up before any group's hooks run. */
  storage(): ObjectStorage
  fixture(): StorageFixture
  /** A key no other test uses, ending in `name`. */
  freshKey(name?: string): string
}

/** Changes one character of the URL's signature (local `sig`, S3 `X-Amz-Signature`). */
export function tamperSignature(url: string): string {
  const parsed = new URL(url)
  const name = parsed.searchParams.has('sig') ? 'sig' : 'X-Amz-Signature'
  const signature = parsed.searchParams.get(name) ?? ''
  const last = signature.at(-1) === 'a' ? 'b' : 'a'
  parsed.searchParams.set(name, `${signature.slice(0, -1)}${last}`)
  return parsed.toString()
}

/** Every byte of a stream (a null stream fails the test). */
export async function readAll(stream: Readable | null): Promise<Buffer> {
  if (!stream) throw new Error('expected a stream, got null')
  const parts: Buffer[] = []
  for await (const chunk of stream as AsyncIterable<Buffer>)
    parts.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk))
  return Buffer.concat(parts)
}

export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex')
}

/** A stream's chunks: `bytes` cut into pieces of `size`. */
export function* chunks(bytes: Buffer, size: number): Generator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
}

/** A clock at real time plus an offset the test moves (StorageFixture.shiftClock); sleeps and ticks run on real time. */
export function shiftableClock(): { clock: Clock; shift(offsetMs: number): void } {
  let offset = 0
  const clock: Clock = {
    ...systemClock,
    now: () => Date.now() + offset,
    seconds: () => Math.floor((Date.now() + offset) / 1000),
  }
  return { clock, shift: (offsetMs) => void (offset = offsetMs) }
}
