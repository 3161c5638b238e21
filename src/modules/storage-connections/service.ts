import { createHash } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import type { SecretBox } from '../../lib/crypto/index.js'
import { AppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { Logger } from '../../lib/log.js'
import { isBlockedHost, type OutboundClient } from '../../lib/outbound/index.js'
import type { Principal } from '../../lib/principal.js'
import type { ObjectStorage } from '../../lib/storage/index.js'
import type { AccessService } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import { createConnectionStorages } from './connection-storages.js'
import { openConnectionStorage } from './object-storage.js'
import type { Probe, ProbeResult, S3Target } from './probe.js'
import type { CreateConnectionInput, UpdateConnectionInput } from './schemas.js'
import { createStorageConnectionsStore, type StorageConnectionChanges, type StorageConnectionRow } from './store.js'

/** A storage connection as the API shows it: everything but the secret key. */
export interface StorageConnection {
  id: string
  label: string
  provider: 'r2' | 's3' | 'minio'
  endpoint: string
  region: string
  bucketName: string
  accessKeyId: string
  createdAt: number
  updatedAt: number
}

export interface StorageConnectionsDeps {
  systemDb: Kysely<any>
  clock: Clock
  /** Seals secret keys at rest (purpose `storage-connections`). */
  box: SecretBox
  audit: AuditService
  /** Checks the caller's permission first in every method (the service boundary). */
  access: Pick<AccessService, 'authorize'>
  log: Logger
  /** Lists one key of the bucket; the real one is createS3Probe. */
  probe: Probe
  /** ALLOW_PRIVATE_NETWORK: when false, endpoints on loopback, private or link-local addresses are refused. */
  allowPrivateNetwork: boolean
  /** The instance's outbound-address rule, which every request to a connection's bucket for files goes through. */
  outbound: Pick<OutboundClient, 'sockets'>
}

/** A connection's bucket opened for the files module, and the bucket's name. */
export interface BucketStorage {
  storage: ObjectStorage
  bucketName: string
}

/** How many files of the project keep their bytes on a connection (the files module answers, registered at its construction). */
export type ConnectionUsage = (projectId: string, connectionId: string) => Promise<number>

const notFound = () => new AppError('not_found', 'Storage connection not found')

// Which column each API field lives in (the secret is sealed separately).
const columns = {
  label: 'label',
  provider: 'provider',
  endpoint: 'endpoint',
  region: 'region',
  bucketName: 'bucket_name',
  accessKeyId: 'access_key_id',
} as const

/**
 * External S3-compatible storage connection profiles of a project (core-api "Storage connection"), used
 * by automation flows. The secret key is sealed with AES-256-GCM under SECRET_KEY and leaves this
 * service only through `target`, for in-process use.
 */
export function createStorageConnectionsService(deps: StorageConnectionsDeps) {
  const store = createStorageConnectionsStore(deps.systemDb)
  const storages = createConnectionStorages()
  const usage: ConnectionUsage[] = []

  async function rowOf(projectId: string, id: string): Promise<StorageConnectionRow> {
    const row = await store.byId(projectId, id)
    if (!row) throw notFound()
    return row
  }

  /** The endpoint as stored (no trailing slash), refused when it names an address this server may not reach. */
  function checkedEndpoint(value: string): string {
    const url = new URL(value)
    if (!deps.allowPrivateNetwork && isBlockedHost(url.hostname)) {
      throw new AppError(
        'invalid_request',
        'endpoint: loopback, private and link-local addresses are refused (set ALLOW_PRIVATE_NETWORK=true to allow them)',
        {
          fields: ['endpoint'],
        },
      )
    }
    const path = url.pathname.replace(/\/+$/, '')
    return `${url.protocol}//${url.host}${path}`
  }

  return {
    /** The project's connections, oldest first. */
    async list(actor: Principal): Promise<StorageConnection[]> {
      await deps.access.authorize(actor, 'system/storage-connections:read')
      const projectId = actor.projectId
      return (await store.list(projectId)).map(toConnection)
    },

    /** One connection of the project. Throws not_found (also for another project's). */
    async get(actor: Principal, id: string): Promise<StorageConnection> {
      await deps.access.authorize(actor, 'system/storage-connections:read')
      const projectId = actor.projectId
      return toConnection(await rowOf(projectId, id))
    },

    /** Saves a connection; nothing is contacted. Throws invalid_request (an endpoint on a refused address). */
    async create(actor: Principal, input: CreateConnectionInput): Promise<StorageConnection> {
      await deps.access.authorize(actor, 'system/storage-connections:create')
      const projectId = actor.projectId
      const now = deps.clock.seconds()
      const row: StorageConnectionRow = {
        id: newId(),
        project_id: projectId,
        label: input.label,
        provider: input.provider,
        endpoint: checkedEndpoint(input.endpoint),
        region: input.region,
        bucket_name: input.bucketName,
        access_key_id: input.accessKeyId,
        secret_key_sealed: deps.box.seal(input.secretKey),
        created_at: now,
        updated_at: now,
      }
      await store.insert(row)
      await deps.audit.record({
        projectId,
        action: 'storage_connection.created',
        actor,
        target: { type: 'storage_connection', id: row.id },
        details: { label: row.label, provider: row.provider, endpoint: row.endpoint, bucketName: row.bucket_name },
      })
      return toConnection(row)
    },

    /**
     * Changes the fields sent; an omitted secretKey keeps the stored one, except that an endpoint on
     * another origin (scheme, host, port) needs it sent again. A body that changes nothing answers the
     * connection as it is. Throws not_found, invalid_request (a refused endpoint, a moved one without secretKey).
     */
    async update(actor: Principal, id: string, input: UpdateConnectionInput): Promise<StorageConnection> {
      await deps.access.authorize(actor, 'system/storage-connections:update')
      const projectId = actor.projectId
      const row = await rowOf(projectId, id)
      const changes: StorageConnectionChanges = {}
      const changed: string[] = []
      for (const key of Object.keys(columns) as (keyof typeof columns)[]) {
        const sent = input[key]
        if (sent === undefined) continue
        const value = key === 'endpoint' ? checkedEndpoint(sent) : sent
        if (value === row[columns[key]]) continue
        Object.assign(changes, { [columns[key]]: value })
        changed.push(key)
      }
      // The secret key was given for one endpoint and is never shown: whoever moves the connection must give
      // it again. Requests signed with it (SigV4) could otherwise be replayed from the new host against a
      // store that does not check Host (MinIO), or read in the clear after a switch to http (decision 048).
      if (
        changes.endpoint !== undefined &&
        input.secretKey === undefined &&
        new URL(changes.endpoint).origin !== new URL(row.endpoint).origin
      ) {
        throw new AppError(
          'invalid_request',
          'secretKey: send it again to move the endpoint to another scheme, host or port (the stored one stays with the endpoint it was given for)',
          {
            fields: ['secretKey'],
          },
        )
      }
      // Not compared with the stored one: a secret sent is a secret replaced (even if sealed under an old key).
      if (input.secretKey !== undefined) {
        changes.secret_key_sealed = deps.box.seal(input.secretKey)
        changed.push('secretKey')
      }
      if (changed.length === 0) return toConnection(row)
      changes.updated_at = deps.clock.seconds()
      if (!(await store.update(projectId, id, changes))) throw notFound()
      await deps.audit.record({
        projectId,
        action: 'storage_connection.updated',
        actor,
        target: { type: 'storage_connection', id },
        // Field names only: the new values may include the secret.
        details: { label: changes.label ?? row.label, changed },
      })
      return toConnection({ ...row, ...changes })
    },

    /**
     * Forgets the connection; the bucket and its objects are not touched. Refused while files keep their
     * bytes on it (they would be lost to the API). Throws not_found, conflict (details.files).
     */
    async delete(actor: Principal, id: string): Promise<void> {
      await deps.access.authorize(actor, 'system/storage-connections:delete')
      const projectId = actor.projectId
      const row = await rowOf(projectId, id)
      let files = 0
      for (const count of usage) files += await count(projectId, id)
      if (files > 0)
        throw new AppError('conflict', `${files} file(s) keep their bytes on this connection; delete them first`, {
          files,
        })
      if (!(await store.delete(projectId, id))) throw notFound()
      storages.forget(id)
      await deps.audit.record({
        projectId,
        action: 'storage_connection.deleted',
        actor,
        target: { type: 'storage_connection', id },
        details: { label: row.label, provider: row.provider, endpoint: row.endpoint, bucketName: row.bucket_name },
      })
    },

    /** Lists one key of the bucket with the stored credentials; the outcome, never thrown. Throws not_found. */
    async test(actor: Principal, id: string): Promise<ProbeResult> {
      await deps.access.authorize(actor, 'system/storage-connections:update')
      const projectId = actor.projectId
      const result = await deps.probe(targetOf(await rowOf(projectId, id), deps.box))
      if (!result.success) {
        deps.log.info(
          { connectionId: id, reason: result.reason, remoteStatus: result.remoteStatus, remoteCode: result.remoteCode },
          'storage connection test failed',
        )
      }
      return result
    },

    /**
     * The endpoint, bucket and credentials, secret included, for in-process use (flows' s3_action): `read`
     * (get, list, head) needs system/storage-connections:read, `write` (put, delete) :update (decision 040).
     * Never send the result to a client or a log. Throws unauthorized, forbidden, not_found.
     */
    async target(actor: Principal, id: string, use: 'read' | 'write' = 'read'): Promise<S3Target> {
      await deps.access.authorize(actor, `system/storage-connections:${use === 'write' ? 'update' : 'read'}`)
      const projectId = actor.projectId
      return targetOf(await rowOf(projectId, id), deps.box)
    },

    /**
     * A connection of the project as object storage for the files module, unchecked: the files service
     * checked its caller (system/files), and whoever saved the container checked the connection (decision
     * 067). `bucketName` null is the connection's own bucket. Requests go through the outbound-address rule;
     * clients are reused while the connection is unchanged. Undefined when the project has no such
     * connection. Throws forbidden (a refused endpoint), service_unavailable (its secret cannot be read).
     */
    async bucketStorage(projectId: string, id: string, bucketName: string | null): Promise<BucketStorage | undefined> {
      const row = await store.byId(projectId, id)
      if (!row) {
        storages.forget(id)
        return undefined
      }
      const bucket = bucketName ?? row.bucket_name
      const version = createHash('sha256')
        .update(JSON.stringify([row.provider, row.endpoint, row.region, row.access_key_id, row.secret_key_sealed]))
        .digest('hex')
      const storage = await storages.get(id, version, bucket, async () => {
        let target: S3Target
        try {
          target = { ...targetOf(row, deps.box), bucketName: bucket }
        } catch {
          throw new AppError(
            'service_unavailable',
            "The storage connection's secret key cannot be read (SECRET_KEY changed): send it again with PUT",
            { storageConnectionId: id },
          )
        }
        return openConnectionStorage(target, deps.outbound.sockets())
      })
      return { storage, bucketName: bucket }
    },

    /** Registers a counter of the files on a connection (the files module, at its construction). */
    addUsage(count: ConnectionUsage): void {
      usage.push(count)
    },

    /** Closes the clients of opened buckets. */
    close: () => storages.close(),
  }
}

export type StorageConnectionsService = ReturnType<typeof createStorageConnectionsService>

function toConnection(row: StorageConnectionRow): StorageConnection {
  return {
    id: row.id,
    label: row.label,
    provider: row.provider as StorageConnection['provider'],
    endpoint: row.endpoint,
    region: row.region,
    bucketName: row.bucket_name,
    accessKeyId: row.access_key_id,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  }
}

function targetOf(row: StorageConnectionRow, box: SecretBox): S3Target {
  return {
    provider: row.provider as S3Target['provider'],
    endpoint: row.endpoint,
    region: row.region,
    bucketName: row.bucket_name,
    accessKeyId: row.access_key_id,
    secretKey: box.open(row.secret_key_sealed),
  }
}
