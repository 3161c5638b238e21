import { describe, expect, it } from 'vitest'
import { readBmp, writeBmp } from './bmp.js'

describe('readBmp', () => {
  it('reads back what writeBmp wrote (bottom-up rows, padded to 4 bytes)', () => {
    const pixels = Buffer.from([255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30, 40, 50, 60, 70, 80, 90])
    expect(readBmp(writeBmp(pixels, 3, 2))).toEqual({ pixels, width: 3, height: 2, channels: 3 })
  })
  it.each([
    ['empty', Buffer.alloc(0)],
    ['not BM', Buffer.alloc(60)],
    ['truncated pixels', writeBmp(Buffer.alloc(30), 5, 2).subarray(0, 60)],
    [
      'a palette (8 bit)',
      (() => {
        const b = writeBmp(Buffer.alloc(12), 2, 2)
        b.writeUInt16LE(8, 28)
        return b
      })(),
    ],
    [
      'RLE compression',
      (() => {
        const b = writeBmp(Buffer.alloc(12), 2, 2)
        b.writeUInt32LE(1, 30)
        return b
      })(),
    ],
    [
      'zero width',
      (() => {
        const b = writeBmp(Buffer.alloc(12), 2, 2)
        b.writeInt32LE(0, 18)
        return b
      })(),
    ],
    [
      'a huge size',
      (() => {
        const b = writeBmp(Buffer.alloc(12), 2, 2)
        b.writeInt32LE(100_000, 18)
        return b
      })(),
    ],
  ])('%s is null', (_name, data) => {
    expect(readBmp(data)).toBeNull()
  })
})
