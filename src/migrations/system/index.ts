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
import { m0013Automate } from './0013-automate.js'
import { m0014Webhooks } from './0014-webhooks.js'
import { m0015AutomateScripts } from './0015-automate-scripts.js'
import { m0016R2Sql } from './0016-r2-sql.js'
import { m0017Email } from './0017-email.js'
import { m0018Notifications } from './0018-notifications.js'
import { m0019AiTokenUsage } from './0019-ai-token-usage.js'
import { m0020Lenses } from './0020-lenses.js'
import { m0021SearchIndexes } from './0021-search-indexes.js'
import { m0022FilesFlowKey } from './0022-files-flow-key.js'
import { m0023McpInvocations } from './0023-mcp-invocations.js'
import { m0024FlowsPublishedBy } from './0024-flows-published-by.js'
import { m0025RunsLeases } from './0025-runs-leases.js'
import { m0026QueueJobs } from './0026-queue-jobs.js'
import { m0027RunsLiveIndex } from './0027-runs-live-index.js'
import { m0028Views } from './0028-views.js'
import { m0029Navigation } from './0029-navigation.js'
import { m0030RenderersLensAttachments } from './0030-renderers-lens-attachments.js'
import { m0031FileContainers } from './0031-file-containers.js'
import { m0032FilesStorageConnection } from './0032-files-storage-connection.js'
import { m0033BlueprintLedger } from './0033-blueprint-ledger.js'

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
  m0013Automate,
  m0014Webhooks,
  m0015AutomateScripts,
  m0016R2Sql,
  m0017Email,
  m0018Notifications,
  m0019AiTokenUsage,
  m0020Lenses,
  m0021SearchIndexes,
  m0022FilesFlowKey,
  m0023McpInvocations,
  m0024FlowsPublishedBy,
  m0025RunsLeases,
  m0026QueueJobs,
  m0027RunsLiveIndex,
  m0028Views,
  m0029Navigation,
  m0030RenderersLensAttachments,
  m0031FileContainers,
  m0032FilesStorageConnection,
  m0033BlueprintLedger,
]
