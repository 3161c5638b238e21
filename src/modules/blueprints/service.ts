import { AppError } from '../../lib/errors.js'
import type { Principal } from '../../lib/principal.js'
import { readArchiveDocument } from './archive.js'
import { readBlueprint, type BlueprintReport } from './document/read.js'
import { planBlueprint } from './plan/planner.js'
import type { PlanResult } from './plan/verdicts.js'
import type { BrickProvider } from './providers/index.js'
import type { PlanRequest, ValidateRequest, ValidateResult } from './schemas.js'

/** The largest document accepted as source (§ Limits). */
export const maxDocumentBytes = 1_000_000

export interface BlueprintsService {
  /**
   * Reads and checks a document sent as source or as an archive, for any signed-in caller. A failing
   * document is an answer (ok false), not an error; the source is never echoed. Throws unauthorized,
   * invalid_request (neither or both of source and archive; an archive refused, details.code), and
   * payload_too_large (a source over 1,000,000 bytes; an archive or its document over its cap).
   */
  validate(principal: Principal, input: ValidateRequest): Promise<ValidateResult>
  /**
   * What installing the document would do to the project, as the caller reads it (decision 069); writes
   * nothing. Needs a person (403 install_needs_person for a key without one and the system) holding
   * system/blueprints:read. Throws as validate does, and invalid_request for a secret parameter's value.
   */
  plan(principal: Principal, input: PlanRequest): Promise<PlanResult>
}

export interface BlueprintsDeps {
  access: { authorize(principal: Principal, permission: string): Promise<void> }
  /** One provider per brick kind, over the modules' services. */
  providers: () => ReadonlyMap<string, BrickProvider>
}

/** Blueprints: documents read and checked, and planned against the project; installs come later (issue 30). */
export function createBlueprintsService(deps: BlueprintsDeps): BlueprintsService {
  return {
    async validate(principal, input) {
      if (principal.kind === 'anonymous') throw new AppError('unauthorized', 'Sign in to validate a blueprint')
      return presentValidation(readBlueprint(await documentSource(input)))
    },

    async plan(principal, input) {
      if (principal.kind === 'anonymous') throw new AppError('unauthorized', 'Sign in to plan a blueprint')
      // A plan is a person's review before an install: checked before grants are consulted (spec).
      if (principal.kind === 'system' || principal.userId === null)
        throw new AppError(
          'install_needs_person',
          'Blueprints are planned and installed by a person, not a key or the system',
        )
      await deps.access.authorize(principal, 'system/blueprints:read')
      const report = readBlueprint(await documentSource(input))
      return planBlueprint(deps.providers(), principal, report, input)
    },
  }
}

/** The document text: exactly one of source or archive. Throws invalid_request, payload_too_large. */
export async function documentSource(input: ValidateRequest): Promise<string> {
  const { source, archive } = input
  if (source !== undefined && archive !== undefined) {
    throw new AppError('invalid_request', 'Send exactly one of source or archive, not both', {
      fields: ['source', 'archive'],
    })
  }
  if (archive !== undefined) return readArchiveDocument(archive)
  if (source === undefined) {
    throw new AppError('invalid_request', 'source is required: the blueprint document (or archive, a base64 zip)', {
      field: 'source',
    })
  }
  // Every UTF-16 unit is at least one UTF-8 byte, so a longer string is over without counting.
  if (source.length > maxDocumentBytes || Buffer.byteLength(source) > maxDocumentBytes) {
    throw new AppError('payload_too_large', `The document is over ${maxDocumentBytes} bytes`, {
      field: 'source',
      limit: maxDocumentBytes,
    })
  }
  return source
}

/** The validate answer: what the document declares and holds, never its text or a parameter's default. */
export function presentValidation(report: BlueprintReport): ValidateResult {
  const envelope = report.envelope
  return {
    ok: report.ok,
    diagnostics: [...report.diagnostics],
    blueprint: {
      id: envelope?.id ?? null,
      name: envelope?.name ?? null,
      version: envelope?.version ?? null,
      publisher: null,
      params: (envelope?.params ?? []).map((p) => ({
        name: p.name,
        type: p.type,
        namespace: p.namespace,
        required: !p.hasDefault,
        secret: p.type === 'secret',
      })),
      assemblies: (envelope?.assemblies ?? []).map((a) => ({
        key: a.key,
        title: a.title,
        required: a.required,
        bricks: [...a.bricks],
      })),
    },
    bricks: report.bricks.map((b) => ({ id: b.id, kind: b.kind, needs: [...b.needs], title: b.title })),
  }
}
