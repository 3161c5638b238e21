import { describe, expect, it } from 'vitest'
import { aiRig } from '../ai-test-rig.js'
import { aiImage } from './ai-image.js'

describe('ai_image config', () => {
  it('prompt required; width and height 64-2048', () => {
    const ok = (config: Record<string, unknown>) => aiImage.configSchema.safeParse({ prompt: 'p', ...config }).success
    expect(aiImage.configSchema.safeParse({}).success).toBe(false)
    expect(ok({ width: 64, height: 2048 })).toBe(true)
    expect(ok({ width: 63 })).toBe(false)
    expect(ok({ height: 2049 })).toBe(false)
    expect(ok({ width: '512' })).toBe(true)
  })
})

describe('ai_image', () => {
  it('asks the service for the image, named after the run and step, and outputs the stored file', async () => {
    const rig = aiRig()
    const output = await rig.run(aiImage, { prompt: 'a fox', width: 512, height: 512 })
    expect(rig.images[0]).toEqual({
      prompt: 'a fox',
      model: undefined,
      width: 512,
      height: 512,
      name: 'ai-image-run-1-gen',
    })
    expect(output).toMatchObject({
      fileId: 'file-1',
      file: { id: 'file-1', mimeType: 'image/png', filename: 'ai-image-run-1-gen.png' },
      tokens: 1003,
      tokensEstimated: true,
    })
  })
})
