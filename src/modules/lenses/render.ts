import { AppError } from '../../lib/errors.js'
import type { Principal } from '../../lib/principal.js'
import { parseSectionTemplate, SectionRenderLimit } from '../../lib/template/sections.js'
import { systemColumns } from '../collections/index.js'
import type { RecordsService } from '../records/index.js'
import { contentTypes, extensions, maxOutputLength, renderFormat, type LensFormat, type RenderData } from './formats.js'
import { resolveParams, substituteFilter } from './params.js'
import type { LensDefinition } from './schemas.js'

export interface RenderInput {
  readonly format: LensFormat
  /** The parameters as sent (query string values, or a flow's urlParams). */
  readonly params: Readonly<Record<string, unknown>>
}

export interface Rendered {
  readonly body: string
  readonly contentType: string
  readonly format: LensFormat
  /** The version rendered; null for the draft. */
  readonly version: number | null
  /** A file name for the output (`<lens name>.<ext>`, made safe). */
  readonly filename: string
  readonly rows: number
}

const systemNames: ReadonlySet<string> = new Set(systemColumns.map((c) => c.name))

/**
 * One render, as `actor`: the parameters checked and substituted into the filter, the records read
 * through the records service (its row rules, its refusal of filters and sorts on fields the caller may
 * not read), the columns cut to those the caller may read, then the format.
 */
export function createRenderer(deps: { records: Pick<RecordsService, 'find' | 'open'> }) {
  return {
    async render(
      actor: Principal,
      lens: { id: string; version: number | null; definition: LensDefinition },
      input: RenderInput,
    ): Promise<Rendered> {
      const { definition } = lens
      const params = resolveParams(definition.params, input.params)
      const opened = await deps.records.open(actor, definition.collection, 'read')
      const known = (name: string) => systemNames.has(name) || opened.shape.byName.has(name)
      const readable = (name: string) =>
        systemNames.has(name) || opened.scope.fields === null || opened.scope.fields.includes(name)
      // A field removed from the collection since the lens was saved is left out, as one the caller may not read.
      const wanted = definition.fields ?? opened.collection.fields.map((f) => f.name)
      const columns = wanted.filter((name) => known(name) && readable(name))
      // Sorting by a column the caller may not read would order rows by its hidden values: that key is dropped.
      const sort = definition.sort.filter((key) => known(key.field) && readable(key.field))
      const filter =
        definition.filter === undefined ? undefined : JSON.stringify(substituteFilter(definition.filter, params))
      // Only the columns are asked for; with none readable, the system id alone (nothing else is shown).
      const page = await deps.records.find(actor, definition.collection, {
        filter,
        sort,
        limit: definition.limit,
        offset: 0,
        fields: columns.length > 0 ? columns : ['id'],
      })
      const rows = page.data.map((record) => {
        const source = record as Record<string, unknown>
        const row: Record<string, unknown> = {}
        for (const name of columns) row[name] = Object.prototype.hasOwnProperty.call(source, name) ? source[name] : null
        return row
      })
      const data: RenderData = {
        lens: { id: lens.id, name: definition.name, description: definition.description, version: lens.version },
        params,
        columns: columns.map((name) => ({ name })),
        rows,
        table: rows.map((row) => ({ cells: columns.map((name) => row[name]) })),
        count: rows.length,
        hasMore: page.hasMore,
      }
      const text = input.format === 'csv' ? undefined : definition.template[input.format]
      const template = text === undefined ? null : parseSectionTemplate(text)
      if (template && !template.ok)
        throw new AppError('validation_error', `template.${input.format}: ${template.error.message}`, {
          at: `template.${input.format}`,
        })
      let body: string
      try {
        body = renderFormat(input.format, template ? template.template : null, data)
      } catch (err) {
        if (err instanceof SectionRenderLimit && err.what === 'steps')
          throw new AppError(
            'limit_exceeded',
            `Rendering the ${input.format} template would take more than ${err.limit} steps (sections nested over long lists)`,
            { limit: err.limit },
          )
        if (err instanceof SectionRenderLimit)
          throw new AppError(
            'limit_exceeded',
            `The rendered ${input.format} would be longer than ${maxOutputLength} characters`,
            { limit: maxOutputLength },
          )
        throw err
      }
      return {
        body,
        contentType: contentTypes[input.format],
        format: input.format,
        version: lens.version,
        filename: `${safeName(definition.name)}.${extensions[input.format]}`,
        rows: rows.length,
      }
    },
  }
}

/** A file name made of the lens name's ASCII letters, digits, `-` and `_` (others become `-`), safe in a header. */
function safeName(name: string): string {
  const safe = name
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100)
  return safe === '' ? 'lens' : safe
}
