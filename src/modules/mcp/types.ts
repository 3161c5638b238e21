import type { z } from 'zod'
import type { Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import type { FlowsService } from '../automate/index.js'
import type { CollectionsService } from '../collections/index.js'
import type { DocsIndex } from './docs-index.js'
import type { EmailService } from '../email/index.js'
import type { RecordsService } from '../records/index.js'
import type { SettingsService } from '../settings/index.js'

/** The project's documentation search (docs-index.ts), as the tools see it. */
export type { DocHit as DocsHit, DocsIndex } from './docs-index.js'

/** What tools and resources reach, each called as the key's principal (so its permission, row and column rules apply). */
export interface ToolServices {
  readonly records: Pick<RecordsService, 'list' | 'aggregate' | 'open'>
  readonly collections: Pick<CollectionsService, 'visible' | 'visibleTo'>
  readonly access: Pick<AccessService, 'decide' | 'listRoles'>
  readonly flows: Pick<FlowsService, 'list' | 'get'>
  readonly email: Pick<EmailService, 'list'>
  readonly settings: Pick<SettingsService, 'read' | 'get'>
  readonly docs: DocsIndex
}

/** One tool of the tool server: its name, what it does, its arguments (checked at run time) and how it answers. Read-only by construction: services get only read methods. */
export interface ToolDefinition<S extends z.ZodObject = z.ZodObject> {
  readonly name: string
  readonly description: string
  readonly inputSchema: S
  run(principal: Principal, args: z.infer<S>, services: ToolServices): Promise<unknown>
}

/** Declares a tool (one file per tool under tools/, collected in tools/index.ts). */
export function defineTool<S extends z.ZodObject>(tool: ToolDefinition<S>): ToolDefinition<S> {
  return Object.freeze(tool)
}
