import type { Principal } from '../../lib/principal.js'
import type { OperationContext } from './types.js'

/**
 * What render_lens_template needs of `ctx.services` (wired in app.ts): the lenses service's render and
 * the files service's write at a key (`writeContent`, the one the Files operations use; decision 040). Both check the run's principal themselves. Typed here, not imported,
 * so the operations module does not depend on the lenses module built after it.
 */
export interface LensServices {
  readonly lenses: {
    render(
      principal: Principal,
      id: string,
      input: { format: 'html' | 'csv' | 'md'; params: Readonly<Record<string, unknown>> },
    ): Promise<{
      body: string
      contentType: string
      format: 'html' | 'csv' | 'md'
      version: number | null
      rows: number
    }>
  }
  readonly files: {
    writeContent(
      principal: Principal,
      key: string,
      input: { bytes: Buffer; mimeType: string; visibility?: 'public' | 'private'; containerId?: string },
    ): Promise<{
      file: { id: string; r2Key: string; sizeBytes: number; mimeType: string; flowKey: string | null }
      replaced: boolean
    }>
  }
}

/** The lens services of the run. */
export function lensServicesOf(ctx: OperationContext): LensServices {
  return ctx.services
}
