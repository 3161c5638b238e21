import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import type { LensServices } from '../lens-step.js'
import { StepError } from '../types.js'
import { testContext } from '../test-context.js'
import { renderLensTemplate } from './render-lens-template.js'

const parse = (config: Record<string, unknown>) =>
  renderLensTemplate.configSchema.safeParse({ templateId: 'lens-1', ...config })

/** Lens and files services that record their calls; `refuse` makes one of them throw an AppError. */
function fakes(refuse: { render?: AppError; save?: AppError } = {}) {
  const calls: { render: unknown[][]; save: unknown[][] } = { render: [], save: [] }
  const services: LensServices = {
    lenses: {
      async render(principal: Principal, id, input) {
        calls.render.push([principal, id, input])
        if (refuse.render) throw refuse.render
        return {
          body: 'title\r\nWidget\r\n',
          contentType: 'text/csv; charset=utf-8',
          format: input.format,
          version: 3,
          rows: 1,
        }
      },
    },
    files: {
      async writeContent(principal: Principal, key, input) {
        calls.save.push([principal, key, input.bytes.toString('utf8'), input.mimeType, input.visibility])
        if (refuse.save) throw refuse.save
        return {
          file: {
            id: 'f1',
            r2Key: 'projects/p1/files/f1/a.csv',
            sizeBytes: input.bytes.length,
            mimeType: input.mimeType,
            flowKey: key,
          },
          replaced: false,
        }
      },
    },
  }
  return { services, calls }
}

describe('render_lens_template: config', () => {
  it('templateId required; format html (default), csv or md; saveToR2 false by default and needs an r2Key', () => {
    expect(renderLensTemplate.configSchema.parse({ templateId: 'x' })).toEqual({
      templateId: 'x',
      format: 'html',
      urlParams: {},
      saveToR2: false,
    })
    expect(renderLensTemplate.configSchema.safeParse({}).success).toBe(false)
    expect(parse({ format: 'pdf' }).success).toBe(false)
    expect(parse({ format: 'md' }).success).toBe(true)
    expect(parse({ saveToR2: true }).success).toBe(false)
    expect(parse({ saveToR2: 'true', r2Key: 'a/b.csv' }).success).toBe(true)
    expect(parse({ urlParams: { a: 'x', b: 2, c: true } }).success).toBe(true)
    expect(parse({ urlParams: { a: { nested: 1 } } }).success).toBe(false)
    expect(parse({ surprise: 1 }).success).toBe(false)
  })
})

describe('render_lens_template: run', () => {
  it("renders as the run's principal with the url parameters; no file unless asked", async () => {
    const { services, calls } = fakes()
    const { ctx } = testContext({}, { services })
    const out = await renderLensTemplate.run(
      renderLensTemplate.configSchema.parse({ templateId: 'lens-1', format: 'csv', urlParams: { status: 'open' } }),
      ctx,
    )
    expect(out).toEqual({
      content: 'title\r\nWidget\r\n',
      contentType: 'text/csv; charset=utf-8',
      format: 'csv',
      version: 3,
      rows: 1,
      file: null,
    })
    expect(calls.render).toEqual([[ctx.principal, 'lens-1', { format: 'csv', params: { status: 'open' } }]])
    expect(calls.save).toEqual([])
  })

  it("saveToR2 writes the output at r2Key as the run's principal, through writeContent, as a private file", async () => {
    const { services, calls } = fakes()
    const { ctx } = testContext({}, { services })
    const out = await renderLensTemplate.run(
      renderLensTemplate.configSchema.parse({
        templateId: 'lens-1',
        format: 'csv',
        saveToR2: true,
        r2Key: 'reports/a.csv',
      }),
      ctx,
    )
    expect(out.file).toEqual({ id: 'f1', r2Key: 'projects/p1/files/f1/a.csv', sizeBytes: 15 })
    expect(calls.save).toEqual([[ctx.principal, 'reports/a.csv', 'title\r\nWidget\r\n', 'text/csv', 'private']])
  })

  it('a dry run renders but stores nothing', async () => {
    const { services, calls } = fakes()
    const { ctx, lines } = testContext({}, { services, dryRun: true })
    const out = await renderLensTemplate.run(
      renderLensTemplate.configSchema.parse({ templateId: 'lens-1', saveToR2: true, r2Key: 'reports/a.html' }),
      ctx,
    )
    expect(out.file).toBeNull()
    expect(calls.save).toEqual([])
    expect(lines.map((l) => l.message)).toEqual(['dry run: the output was not stored at reports/a.html'])
  })

  it("a refusal of the render or the write is a typed step error with the API's code and status", async () => {
    const render = fakes({ render: new AppError('forbidden', 'Missing permission system/lenses:read') })
    await expect(
      renderLensTemplate.run(
        renderLensTemplate.configSchema.parse({ templateId: 'x' }),
        testContext({}, { services: render.services }).ctx,
      ),
    ).rejects.toMatchObject({
      name: 'StepError',
      code: 'forbidden',
      statusCode: 403,
      retryable: false,
    })
    const save = fakes({ save: new AppError('forbidden', 'key "a" holds a file you may not replace') })
    const error = await renderLensTemplate
      .run(
        renderLensTemplate.configSchema.parse({ templateId: 'x', saveToR2: true, r2Key: 'a' }),
        testContext({}, { services: save.services }).ctx,
      )
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(StepError)
    expect(error).toMatchObject({ code: 'forbidden', statusCode: 403 })
  })
})
