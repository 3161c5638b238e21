import { randomBytes } from 'node:crypto'
import { accessSync, constants, existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from '../../config.js'
import { createStorage } from '../../lib/storage/index.js'
import { fail, ok, where, withinTimeout, type CheckResult } from './check.js'

/** File storage: the local files directory writable, or an S3 probe object put, read back and deleted. */
export async function checkStorage(config: Config): Promise<CheckResult> {
  if (config.storage.kind === 'local') {
    const files = join(config.dataDir, 'files')
    const dir = existsSync(files) ? files : existsSync(config.dataDir) ? config.dataDir : null
    if (dir === null) return ok('storage', `local files in ${files}: made at first start`)
    try {
      accessSync(dir, constants.W_OK | constants.X_OK)
    } catch {
      return fail(
        'storage',
        `${dir} is not writable by this user: uploads would fail; give the server's user ownership of it`,
      )
    }
    return ok('storage', `local files in ${files}: writable`)
  }
  const { bucket, endpoint } = config.storage
  const at = `S3 bucket ${bucket} at ${where(endpoint, new URL(endpoint).protocol === 'https:' ? 443 : 80)}`
  // The stand-in key only signs local URLs, which the S3 driver never makes.
  const storage = await createStorage({
    settings: config.storage,
    dataDir: config.dataDir,
    publicUrl: config.publicUrl,
    secretKey: config.secretKey,
  })
  const key = `plinth-doctor/probe-${randomBytes(8).toString('hex')}.txt`
  let step = 'put'
  try {
    await withinTimeout(storage.put(key, Buffer.from('plinth doctor probe'), { contentType: 'text/plain' }), 15_000)
    step = 'head'
    const found = await withinTimeout(storage.head(key), 15_000)
    if (!found)
      return fail('storage', `${at}: a probe object was put but is not found: check the bucket's name and endpoint`)
    step = 'delete'
    await withinTimeout(storage.delete(key), 15_000)
    return ok('storage', `${at}: a probe object was put, read and deleted`)
  } catch (err) {
    return fail(
      'storage',
      `${at}: the probe's ${step} failed: ${describeS3Error(err)}. Check S3_ENDPOINT, S3_BUCKET and that the key may put, read and delete`,
    )
  } finally {
    await storage.close().catch(() => {})
  }
}

/** The store's error name (AccessDenied, NoSuchBucket…), or the network cause; never a credential. */
function describeS3Error(err: unknown): string {
  const details = (err as { details?: { storageError?: unknown } }).details
  if (typeof details?.storageError === 'string') return details.storageError
  if ((err as { code?: string }).code === 'ETIMEDOUT') return 'no answer in time'
  return (err as Error).name || 'failed'
}
