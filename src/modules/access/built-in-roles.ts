/** The six built-in roles of every project and their default grants (addendum §3). */
export interface GrantSpec {
  readonly resource: string
  readonly action: string
  readonly item_filter?: unknown
  readonly fields?: readonly string[]
}

export interface BuiltInRole {
  readonly name: string
  readonly description: string
  readonly adminAccess: boolean
  readonly grants: readonly GrantSpec[]
}

export const SUPER_ADMIN = 'super_admin'
export const ADMIN = 'admin'
export const EDITOR = 'editor'
export const VIEWER = 'viewer'
export const API = 'api'
export const PUBLIC = 'public'

export const builtInRoles: readonly BuiltInRole[] = [
  { name: SUPER_ADMIN, description: 'Everything, in every project', adminAccess: true, grants: [] },
  { name: ADMIN, description: 'Everything in its project', adminAccess: true, grants: [] },
  {
    name: EDITOR,
    description: 'Reads and writes collections and files',
    adminAccess: false,
    grants: [
      { resource: 'collections/*', action: 'read' },
      { resource: 'collections/*', action: 'create' },
      { resource: 'collections/*', action: 'update' },
      { resource: 'collections/*', action: 'delete' },
      { resource: 'system/files', action: 'read' },
      { resource: 'system/files', action: 'create' },
      { resource: 'system/files', action: 'update', item_filter: { uploadedBy: { _eq: '$CURRENT_USER' } } },
      { resource: 'system/files', action: 'delete', item_filter: { uploadedBy: { _eq: '$CURRENT_USER' } } },
      { resource: 'system/automate', action: 'read' },
      { resource: 'system/automate', action: 'execute' },
      // The shared menu (decision 064): editors build it.
      { resource: 'system/navigation', action: 'read' },
      { resource: 'system/navigation', action: 'create' },
      { resource: 'system/navigation', action: 'update' },
      { resource: 'system/navigation', action: 'delete' },
      // Builder resources a team shares (decision 065).
      { resource: 'system/renderers', action: 'read' },
      { resource: 'system/renderers', action: 'create' },
      { resource: 'system/renderers', action: 'update' },
      { resource: 'system/renderers', action: 'delete' },
      { resource: 'system/lens-attachments', action: 'read' },
      { resource: 'system/lens-attachments', action: 'create' },
      { resource: 'system/lens-attachments', action: 'update' },
      { resource: 'system/lens-attachments', action: 'delete' },
      { resource: 'system/views', action: 'read' },
      { resource: 'system/views', action: 'create' },
      { resource: 'system/views', action: 'update' },
      { resource: 'system/views', action: 'delete' },
      { resource: 'system/containers', action: 'read' },
      // Editors plan blueprints (issue 30); what an install writes still needs each brick's own grants.
      { resource: 'system/blueprints', action: 'read' },
    ],
  },
  {
    name: VIEWER,
    description: 'Reads collections and files',
    adminAccess: false,
    grants: [
      { resource: 'collections/*', action: 'read' },
      { resource: 'system/files', action: 'read' },
      { resource: 'system/navigation', action: 'read' },
      { resource: 'system/renderers', action: 'read' },
      { resource: 'system/lens-attachments', action: 'read' },
      // Personal views, as Directus users keep bookmarks; sharing one needs update (decision 063).
      { resource: 'system/views', action: 'read' },
      { resource: 'system/views', action: 'create' },
      { resource: 'system/containers', action: 'read' },
    ],
  },
  { name: API, description: 'API key identity: each key carries its own capabilities', adminAccess: false, grants: [] },
  { name: PUBLIC, description: 'Anonymous callers; sign-up is checked as this role', adminAccess: false, grants: [] },
]

/** Roles whose power is not expressed in grants, so their grants cannot be edited. */
export const fixedRoles: ReadonlySet<string> = new Set([SUPER_ADMIN, ADMIN])
