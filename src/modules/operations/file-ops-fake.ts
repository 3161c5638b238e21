import { AppError } from '../../lib/errors.js'
import { createOutboundClient } from '../../lib/outbound/index.js'
import type { FileWire } from '../files/index.js'
import type { FileServices } from './file-ops.js'
import { testContext, testServices } from './test-context.js'
import type { OperationContext } from './types.js'

/** A stored file of the fake: what readContent answers. */
export interface FakeFile {
  readonly file: FileWire
  readonly bytes: Buffer
}

/** One call to writeContent the fake received (what a real service would have stored). */
export interface FakeWrite {
  readonly key: string
  readonly bytes: Buffer
  readonly mimeType: string
  readonly visibility?: string
  readonly collectionName?: string
}

let counter = 0

/** A File object for the fake. */
export function fakeFile(filename: string, mimeType: string, bytes: Buffer, extra: Partial<FileWire> = {}): FakeFile {
  const id = (++counter).toString(16).padStart(32, '0')
  const file: FileWire = {
    id,
    projectId: 'p1',
    collectionName: '__system',
    r2Key: `projects/p1/files/${id}/${filename}`,
    filename,
    mimeType,
    sizeBytes: bytes.length,
    sha256: null,
    uploadedBy: 'u1',
    visibility: 'public',
    status: 'complete',
    createdAt: 0,
    updatedAt: 0,
    variantStatus: 'none',
    variants: {},
    flowKey: null,
    ...extra,
  }
  return { file, bytes }
}

/**
 * Files services for the Files operations' unit tests: files by id, r2Key or flow key (an unknown key is not_found, as the
 * real service answers a file the caller may not see), writes recorded, a refusal injectable per key.
 */
export function fakeFileServices(files: readonly FakeFile[] = [], refuse: Record<string, AppError> = {}) {
  const writes: FakeWrite[] = []
  const byKey = new Map(
    files.flatMap((f) => [
      [f.file.id, f] as const,
      [f.file.r2Key, f] as const,
      ...(f.file.flowKey === null ? [] : [[f.file.flowKey, f] as const]),
    ]),
  )
  const services: FileServices = {
    files: {
      async readContent(_principal, key, maxBytes) {
        if (refuse[key]) throw refuse[key]
        const found = byKey.get(key)
        if (!found) throw new AppError('not_found', 'File not found')
        if (found.bytes.length > maxBytes) throw new AppError('limit_exceeded', 'too large', { limit: maxBytes })
        return found
      },
      async writeContent(_principal, key, input) {
        if (refuse[key]) throw refuse[key]
        const existing = byKey.get(key)
        writes.push({
          key,
          bytes: input.bytes,
          mimeType: input.mimeType,
          visibility: input.visibility,
          collectionName: input.collectionName,
        })
        const made = fakeFile(
          existing?.file.filename ?? key.slice(key.lastIndexOf('/') + 1),
          input.mimeType,
          input.bytes,
          existing ? { id: existing.file.id, flowKey: existing.file.flowKey } : { flowKey: key },
        )
        return { file: made.file, replaced: existing !== undefined }
      },
    },
    storageConnections: {
      async target() {
        throw new AppError('not_found', 'Storage connection not found')
      },
    },
    outbound: createOutboundClient({ allowPrivateNetwork: false }),
  }
  function context(data: Record<string, unknown> = {}): OperationContext {
    return { ...testContext(data).ctx, services: testServices(services) }
  }
  return { services, writes, context }
}
