import { AppError } from '../../lib/errors.js'
import { acceptsType, type Container } from '../containers/index.js'
import type { FilesContext } from './context.js'
import type { FileRow } from './model.js'

export type { Container }

/**
 * The container an upload names (decision 066), checked against the file's type before a byte is stored.
 * Throws invalid_request: an unknown container (another project's too), or a type it does not accept (the
 * code the files module refuses a bad file with); `fields` names the request's fields (a flow's differ).
 */
export async function containerOf(
  ctx: FilesContext,
  projectId: string,
  id: string | undefined,
  mimeType: string,
  fields: { container: string; type: string } = { container: 'container_id', type: 'file' },
): Promise<Container | undefined> {
  if (id === undefined) return undefined
  const container = id === '' ? undefined : await ctx.deps.containerRules?.(projectId, id)
  const field = fields.container
  if (!container) throw new AppError('invalid_request', `${field}: no container "${id.slice(0, 60)}"`, { field })
  checkContainerType(container, mimeType, fields.type)
  return container
}

/** The container a file was uploaded into, whose rules its replacements meet; undefined for none. */
export async function containerOfFile(
  ctx: FilesContext,
  row: Pick<FileRow, 'project_id' | 'container_id'>,
): Promise<Container | undefined> {
  const id = row.container_id ?? null
  return id === null ? undefined : ctx.deps.containerRules?.(row.project_id, id)
}

/** Refuses a type the container does not accept: invalid_request naming the file, before anything is stored. */
export function checkContainerType(container: Container, mimeType: string, field = 'file'): void {
  if (!acceptsType(container.allowedTypes, mimeType))
    throw new AppError('invalid_request', `The container "${container.name}" does not accept ${mimeType}`, {
      field,
      allowedTypes: container.allowedTypes,
    })
}

/** Refuses a file larger than the container allows: limit_exceeded, as every size ceiling of the files module. */
export function checkContainerSize(container: Container, sizeBytes: number): void {
  if (container.maxFileBytes !== null && sizeBytes > container.maxFileBytes)
    throw new AppError('limit_exceeded', `The file is larger than ${container.maxFileBytes} bytes`, {
      limit: container.maxFileBytes,
    })
}
