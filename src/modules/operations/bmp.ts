/**
 * A reader for uncompressed BMP images (24-bit and 32-bit BI_RGB, 32-bit BI_BITFIELDS in BGRA order),
 * which sharp's prebuilt libvips does not read: gives raw RGB(A) pixels sharp takes as `raw` input.
 * Anything else (palettes, RLE, other masks) is null: the caller treats it as an unreadable image.
 */
export function readBmp(data: Buffer): { pixels: Buffer; width: number; height: number; channels: 3 | 4 } | null {
  if (data.length < 54 || data.toString('latin1', 0, 2) !== 'BM') return null
  const offset = data.readUInt32LE(10)
  const headerSize = data.readUInt32LE(14)
  if (headerSize < 40) return null
  const width = data.readInt32LE(18)
  const rawHeight = data.readInt32LE(22)
  const bits = data.readUInt16LE(28)
  const compression = data.readUInt32LE(30)
  const height = Math.abs(rawHeight)
  if (width <= 0 || height === 0 || width > 16_384 || height > 16_384) return null
  if (!((bits === 24 && compression === 0) || (bits === 32 && (compression === 0 || compression === 3)))) return null
  const bytesPerPixel = bits / 8
  const stride = Math.ceil((width * bytesPerPixel) / 4) * 4
  if (offset + stride * height > data.length) return null
  const channels = bits === 32 ? 4 : 3
  const pixels = Buffer.alloc(width * height * channels)
  for (let y = 0; y < height; y++) {
    // Positive height: rows stored bottom-up.
    const row = offset + (rawHeight > 0 ? height - 1 - y : y) * stride
    for (let x = 0; x < width; x++) {
      const from = row + x * bytesPerPixel
      const to = (y * width + x) * channels
      pixels[to] = data[from + 2]!
      pixels[to + 1] = data[from + 1]!
      pixels[to + 2] = data[from]!
      // BI_RGB 32-bit leaves the fourth byte unused: opaque.
      if (channels === 4) pixels[to + 3] = compression === 3 ? data[from + 3]! : 255
    }
  }
  return { pixels, width, height, channels }
}

/** A 24-bit BMP of raw RGB pixels (tests make BMP sources with it). */
export function writeBmp(pixels: Buffer, width: number, height: number): Buffer {
  const stride = Math.ceil((width * 3) / 4) * 4
  const out = Buffer.alloc(54 + stride * height)
  out.write('BM', 0, 'latin1')
  out.writeUInt32LE(out.length, 2)
  out.writeUInt32LE(54, 10)
  out.writeUInt32LE(40, 14)
  out.writeInt32LE(width, 18)
  out.writeInt32LE(height, 22)
  out.writeUInt16LE(1, 26)
  out.writeUInt16LE(24, 28)
  out.writeUInt32LE(stride * height, 34)
  for (let y = 0; y < height; y++) {
    const row = 54 + (height - 1 - y) * stride
    for (let x = 0; x < width; x++) {
      const from = (y * width + x) * 3
      out[row + x * 3] = pixels[from + 2]!
      out[row + x * 3 + 1] = pixels[from + 1]!
      out[row + x * 3 + 2] = pixels[from]!
    }
  }
  return out
}
