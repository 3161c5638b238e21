import { z } from 'zod'
import { aiOf, model, prompt, usageOf, whole } from '../ai-step.js'
import { defineOperation } from '../types.js'

/**
 * Generates an image and stores it as a file through the files API as the run's principal (its
 * permissions, the project's storage quota and file events apply); output the file's id and metadata.
 */
export const aiImage = defineOperation({
  type: 'ai_image',
  category: 'ai',
  label: 'AI image',
  description:
    'Generates an image from a prompt and stores it as a file; output { fileId, file { id, r2Key, filename, mimeType, sizeBytes, visibility }, model, provider, tokens, tokensEstimated }.',
  effects: 'writes',
  configSchema: z.strictObject({
    prompt: prompt().describe('What to draw (a template)'),
    model: model(),
    width: whole(64, 2048).optional().describe('Width in pixels (64-2048; the model may round it)'),
    height: whole(64, 2048).optional().describe('Height in pixels (64-2048; the model may round it)'),
  }),
  example: { prompt: 'A watercolour of {{$trigger.body.city}} at dawn', width: 1024, height: 768 },
  async run(config, ctx) {
    const name = `ai-image-${ctx.run.id}-${ctx.step.key}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 100)
    const result = await aiOf(ctx).image(
      ctx.principal,
      { prompt: config.prompt, model: config.model, width: config.width, height: config.height, name },
      ctx.signal,
    )
    return { fileId: result.file.id, file: result.file, ...usageOf(result) }
  },
})
