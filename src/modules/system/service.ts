import type { Health } from './schemas.js'

export interface SystemFacts {
  version: string
  database: Health['database']
  storage: Health['storage']
  cache: Health['cache']
  emailChannel: Health['email_capabilities']['channel']
  /** Whether signed delivery receipts are accepted (EMAIL_RECEIPT_SECRET set). */
  emailReceipts?: boolean
}

/** What an instance reports about itself. The facts are fixed at start-up, so the report is built once. */
export function createSystemService(facts: SystemFacts) {
  const health: Health = Object.freeze({
    status: 'ok' as const,
    version: facts.version,
    database: facts.database,
    storage: facts.storage,
    cache: facts.cache,
    email_capabilities: Object.freeze({
      arbitraryRecipients: facts.emailChannel !== 'email_no_channel',
      channel: facts.emailChannel,
      deliveryReceipts: facts.emailReceipts ?? false,
    }),
  })
  return {
    /** The instance's health and capabilities; answering at all means it accepts requests. */
    health: (): Health => health,
  }
}

export type SystemService = ReturnType<typeof createSystemService>
