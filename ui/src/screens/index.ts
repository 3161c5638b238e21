import type { FunctionComponent } from 'preact'
import { Account } from './account.js'
import { Audit } from './audit.js'
import { CollectionSchema } from './collection-schema.js'
import { Collections } from './collections.js'
import { EmailLog } from './email-log.js'
import { Files } from './files.js'
import { FlowEditor } from './flow-editor.js'
import { FlowRuns } from './flow-runs.js'
import { Flows } from './flows.js'
import { Home } from './home.js'
import { Keys } from './keys.js'
import { Notifications } from './notifications.js'
import { Records } from './records.js'
import { Role } from './role.js'
import { Roles } from './roles.js'
import { Settings } from './settings.js'
import { Storage } from './storage.js'
import { ToolInvocations } from './tool-invocations.js'
import { Users } from './users.js'
import { View } from './view.js'

import type { ScreenProps } from '../screen-props.js'

export type Section = 'Data' | 'Automation' | 'Access' | 'System' | 'Activity'

export interface Screen {
  readonly path: string
  readonly component: FunctionComponent<ScreenProps>
  /** Its entry in the sidebar, if it has one. */
  readonly nav?: { readonly section: Section; readonly label: string }
}

/** Every screen of the UI: the router and the sidebar both read this list. Order is the sidebar's. */
export const screens: readonly Screen[] = [
  { path: '/', component: Home, nav: { section: 'Data', label: 'Overview' } },
  { path: '/collections', component: Collections, nav: { section: 'Data', label: 'Collections' } },
  { path: '/collections/:name', component: Records },
  { path: '/collections/:name/schema', component: CollectionSchema },
  { path: '/views/:id', component: View },
  { path: '/files', component: Files, nav: { section: 'Data', label: 'Files' } },
  { path: '/flows', component: Flows, nav: { section: 'Automation', label: 'Flows' } },
  { path: '/flows/:id', component: FlowEditor },
  { path: '/flows/:id/runs', component: FlowRuns },
  { path: '/users', component: Users, nav: { section: 'Access', label: 'Users' } },
  { path: '/roles', component: Roles, nav: { section: 'Access', label: 'Roles' } },
  { path: '/roles/:id', component: Role },
  { path: '/keys', component: Keys, nav: { section: 'Access', label: 'API keys' } },
  { path: '/settings', component: Settings, nav: { section: 'System', label: 'Settings' } },
  { path: '/storage', component: Storage, nav: { section: 'System', label: 'Storage connections' } },
  { path: '/audit', component: Audit, nav: { section: 'Activity', label: 'Audit log' } },
  { path: '/tools', component: ToolInvocations, nav: { section: 'Activity', label: 'Tool calls' } },
  { path: '/email', component: EmailLog, nav: { section: 'Activity', label: 'Email' } },
  { path: '/notifications', component: Notifications, nav: { section: 'Activity', label: 'Notifications' } },
  { path: '/account', component: Account },
]
