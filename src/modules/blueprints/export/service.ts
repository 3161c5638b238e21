import { AppError, isAppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import { compileBody } from '../document/compile.js'
import { readBlueprint } from '../document/read.js'
import type { BrickKindName } from '../kinds/index.js'
import type { BrickProvider } from '../providers/provider.js'
import { maxDocumentBytes } from '../document-source.js'
import { exportBricks } from './bricks.js'
import { emitDocument } from './emit.js'
import { namespacer } from './namespace.js'
import type { ExportRequest } from './request.js'
import { selectResources } from './select.js'

/** What an export reads through: the access check and the providers. */
export interface ExportDeps {
  access: { authorize(principal: Principal, permission: string): Promise<void> }
  providers: () => ReadonlyMap<string, BrickProvider>
}

/** What an export answers: the document, and what it holds. */
export interface ExportResult {
  /** The `service-blueprint-v1` document. */
  source: string
  /** A file name for it: `<id>.ebp.md`. */
  filename: string
  blueprint: { id: string; name: string; version: string }
  bricks: { id: string; kind: BrickKindName; needs: string[] }[]
  /** The secret parameters declared (credentials held by the exported resources), to give at install time. */
  secrets: string[]
}

/**
 * A project, or part of it, as one blueprint document (issue 30 item 7, decision 071). The caller needs
 * system/blueprints:read (a key may export: no person is needed, nothing is written) and reads every
 * resource as themselves, through each kind's provider: what they may not read is refused as its own
 * route refuses it (403, or 404 for a name they cannot see), never exported. Credentials never leave: each
 * is a secret parameter. The document is read back before it is answered: one that would not validate is
 * refused (400 naming what), never handed out. Throws unauthorized, forbidden, not_found,
 * collection_not_found, invalid_request, payload_too_large.
 */
export async function exportBlueprint(
  deps: ExportDeps,
  principal: Principal,
  request: ExportRequest,
): Promise<ExportResult> {
  if (principal.kind === 'anonymous') throw new AppError('unauthorized', 'Sign in to export a blueprint')
  await deps.access.authorize(principal, 'system/blueprints:read')
  const providers = deps.providers()

  const items = await selectResources(providers, principal, request, namespacer(request.namespace, []))
  // The names a body may refer to: the export's own, and every collection the caller sees in the namespace.
  const collections = await providers.get('collection')!.list!(principal)
  const ns = namespacer(request.namespace, [
    ...collections.map((c) => c.ref),
    ...items.map((i) => String(i.shape.name ?? '')).filter((n) => n !== ''),
  ])
  const { bricks, secrets } = exportBricks(items, providers, ns)
  const source = emitDocument(request, bricks, secrets)
  if (Buffer.byteLength(source) > maxDocumentBytes)
    throw new AppError('payload_too_large', `The document would be over ${maxDocumentBytes} bytes: export less`, {
      limit: maxDocumentBytes,
    })
  checkDocument(source, providers)
  return {
    source,
    filename: `${request.id}.ebp.md`,
    blueprint: { id: request.id, name: request.name, version: request.version },
    bricks: bricks.map((b) => ({ id: b.id, kind: b.kind, needs: b.needs })),
    secrets,
  }
}

/**
 * The document as validate and plan will read it: no diagnostic that is an error, and each brick's body
 * one its create route takes (compiled with the defaults; secrets as placeholders). A failure names the
 * brick; it means a live resource a document cannot express as it stands.
 */
function checkDocument(source: string, providers: ReadonlyMap<string, BrickProvider>): void {
  const report = readBlueprint(source)
  const errors = report.diagnostics.filter((d) => d.severity === 'error')
  if (errors.length > 0)
    throw new AppError('invalid_request', `The exported document would not validate: ${errors[0]!.message}`, {
      diagnostics: errors.slice(0, 20),
    })
  const params = report.envelope?.params ?? []
  for (const brick of report.bricks) {
    try {
      providers.get(brick.kind)?.desired(compileBody(brick.body, params, {}).value)
    } catch (err) {
      if (!isAppError(err)) throw err
      throw new AppError('invalid_request', `The ${brick.kind} of brick ${brick.id} would be refused: ${err.message}`, {
        brickId: brick.id,
        kind: brick.kind,
      })
    }
  }
}
