import { AppError } from '../../lib/errors.js'
import { acceptsType, type Container } from '../containers/index.js'
import type { FilesContext } from './context.js'

export type { Container }

/**
 * The container an upload names (decision 066), checked against the file's type before a byte is stored.
 * Throws invalid_request: an unknown container (another project's too), a type it does not accept (the
 * code the files module refuses a bad file with), or one on a storage connection (not served yet).
 */
export async function containerOf(
  ctx: FilesContext,
  projectId: string,
  id: string | undefined,
  mimeType: string,
): Promise<Container | undefined> {
  if (id === undefined) return undefined
  const container = id === '' ? undefined : await ctx.deps.containerRules?.(projectId, id)
  if (!container)
    throw new AppError('invalid_request', `container_id: no container "${id.slice(0, 60)}"`, { field: 'container_id' })
  if (container.storageConnectionId !== null)
    throw new AppError(
      'invalid_request',
      'container_id: uploads into a container on a storage connection are not served yet; use one on the instance storage',
      { field: 'container_id' },
    )
  if (!acceptsType(container.allowedTypes, mimeType))
    throw new AppError('invalid_request', `The container "${container.name}" does not accept ${mimeType}`, {
      field: 'file',
      allowedTypes: container.allowedTypes,
    })
  return container
}

/** Refuses a file larger than the container allows: limit_exceeded, as every size ceiling of the files module. */
export function checkContainerSize(container: Container, sizeBytes: number): void {
  if (container.maxFileBytes !== null && sizeBytes > container.maxFileBytes)
    throw new AppError('limit_exceeded', `The file is larger than ${container.maxFileBytes} bytes`, {
      limit: container.maxFileBytes,
    })
}
