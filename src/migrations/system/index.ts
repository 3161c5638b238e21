import type { Migration } from '../../lib/db/index.js'
import { m0001Projects } from './0001-projects.js'
import { m0002Identity } from './0002-identity.js'
import { m0003UsersEmailTrusted } from './0003-users-email-trusted.js'
import { m0004Collections } from './0004-collections.js'
import { m0005ImportJobs } from './0005-import-jobs.js'
import { m0006StructureJobs } from './0006-structure-jobs.js'
import { m0007Files } from './0007-files.js'
import { m0008StorageConnections } from './0008-storage-connections.js'
import { m0009AuthTokensByUser } from './0009-auth-tokens-by-user.js'
import { m0010FilesUploadKey } from './0010-files-upload-key.js'
import { m0011DatabaseBindingsPrivateNetwork } from './0011-database-bindings-private-network.js'
import { m0012CollectionsIndexes } from './0012-collections-indexes.js'

/** System database migrations, in order. Append only; never edit one that has shipped. */
export const systemMigrations: readonly Migration[] = [
  m0001Projects,
  m0002Identity,
  m0003UsersEmailTrusted,
  m0004Collections,
  m0005ImportJobs,
  m0006StructureJobs,
  m0007Files,
  m0008StorageConnections,
  m0009AuthTokensByUser,
  m0010FilesUploadKey,
  m0011DatabaseBindingsPrivateNetwork,
  m0012CollectionsIndexes,
]
