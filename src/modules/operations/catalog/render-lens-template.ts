import { z } from 'zod'
import { throughRecords } from '../data-ops.js'
import { containerIdConfig } from '../file-ops.js'
import { lensServicesOf } from '../lens-step.js'
import { flag, text } from '../schema-helpers.js'
import { literalFlag } from '../needs.js'
import { defineOperation } from '../types.js'

/**
 * Renders a lens's published version as the run's principal (its row and column rules apply, as on
 * GET /lenses/:id/render), and with saveToR2 stores the output as a file at r2Key through the files
 * service's writeContent, also as the run's principal: the keys and rules of file_upload (decisions 040, 041).
 */
export const renderLensTemplate = defineOperation({
  type: 'render_lens_template',
  category: 'data',
  label: 'Render lens',
  description:
    "Renders a published lens as html (default), csv or md with urlParams as the run's user; saveToR2 stores the output as a private file at r2Key. Output { content, contentType, format, version, rows, file }.",
  // With saveToR2 it writes a file; without, it only reads (a dry run renders it). A saving step is not run in a
  // dry run; were it run all the same (the effects of another version), it would still skip the save.
  effects: 'writes',
  effectsNote: 'reads without saveToR2',
  effectsWhen: (config) => (literalFlag(config.saveToR2) === false ? 'reads' : 'writes'),
  // The lens's own collections are only known once it is read; its render checks them as the run's user.
  needs: (config) => [
    { resource: 'system/lenses', action: 'read' },
    ...(literalFlag(config.saveToR2) === false ? [] : [{ resource: 'system/files', action: 'create' }]),
  ],
  example: {
    templateId: '{{$trigger.body.lensId}}',
    format: 'csv',
    urlParams: { status: 'open' },
    saveToR2: true,
    r2Key: 'reports/open-orders.csv',
  },
  configSchema: z
    .strictObject({
      templateId: text(64, 1).describe('The lens id'),
      format: z.enum(['html', 'csv', 'md']).default('html').describe('html (default), csv or md'),
      urlParams: z
        .record(z.string(), z.union([z.string().max(1000), z.number(), z.boolean()]))
        .default({})
        .describe("The lens's parameters, as the render URL's query string would send them"),
      saveToR2: flag.default(false).describe('Store the output as a file at r2Key'),
      r2Key: text(1024)
        .optional()
        .describe(
          "Where the file goes: a flow key (reports/daily.csv), or the id or r2Key of a file to replace, as file_upload's key",
        ),
      containerId: containerIdConfig(),
    })
    .superRefine((config, ctx) => {
      if (config.saveToR2 && !config.r2Key)
        ctx.addIssue({ code: 'custom', path: ['r2Key'], message: 'saveToR2 needs an r2Key' })
    }),
  async run(config, ctx) {
    const services = lensServicesOf(ctx)
    const rendered = await throughRecords(() =>
      services.lenses.render(ctx.principal, config.templateId, { format: config.format, params: config.urlParams }),
    )
    let file: { id: string; r2Key: string; sizeBytes: number } | null = null
    if (config.saveToR2 && config.r2Key) {
      if (ctx.run.dryRun) {
        ctx.log({ level: 'info', message: `dry run: the output was not stored at ${config.r2Key}` })
      } else {
        const key = config.r2Key
        // A render is one person's view of the data: a new file is private, and a public file is never overwritten with it.
        const bytes = Buffer.from(rendered.body, 'utf8')
        const mimeType = rendered.contentType.split(';')[0]!.trim()
        const saved = await throughRecords(() =>
          services.files.writeContent(ctx.principal, key, {
            bytes,
            mimeType,
            visibility: 'private',
            containerId: config.containerId,
          }),
        )
        file = { id: saved.file.id, r2Key: saved.file.r2Key, sizeBytes: saved.file.sizeBytes }
      }
    }
    return {
      content: rendered.body,
      contentType: rendered.contentType,
      format: rendered.format,
      version: rendered.version,
      rows: rendered.rows,
      file,
    }
  },
})
