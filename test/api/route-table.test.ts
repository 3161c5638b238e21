import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PlinthServices } from '../../src/app.js'
import { principals, type Principal } from '../../src/lib/principal.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, roleId, signUpOwner, type Account } from '../support/identity.js'
import { operations, type Operation } from '../support/route-table.js'
import { exportRequest } from '../../src/modules/blueprints/export/request.js'
import { exportBlueprint } from '../../src/modules/blueprints/export/service.js'
import { brickProviders } from '../../src/modules/blueprints/providers/index.js'

// Issue 13, decision 022: every route with a declared permission refuses a signed-in caller that lacks it,
// over HTTP and when its service is called directly (a flow step, a tool or a blueprint reaches services,
// not routes). The table of routes is read from the OpenAPI document; the table of direct calls is keyed by
// operationId and must cover every such route, so a new route without a service-side check fails here.

/** Two callers lacking every declared permission: a person whose role holds no grant, and a key whose capabilities cover none. */
type Who = 'grantless user' | 'narrow key'

/**
 * What a refusal looks like where it is not 403 forbidden (hidden means missing, STYLE.md 9):
 * - a collection the caller may not read is missing to it (definition, options, records, shares, imports);
 * - the list of collections answers only those it may read: none.
 * Structure scans refuse with the spec's upper-case FORBIDDEN. Everything else is 403 `forbidden`.
 */
const refusals: Record<string, { status: number; code: string | null }> = {
  'collections.list': { status: 200, code: null },
  'collections.get': { status: 404, code: 'collection_not_found' },
  'structure.fieldOptions': { status: 404, code: 'COLLECTION_NOT_FOUND' },
  'structure.collectionOptions': { status: 404, code: 'COLLECTION_NOT_FOUND' },
  'structure.scan': { status: 403, code: 'FORBIDDEN' },
  'structure.startScan': { status: 403, code: 'FORBIDDEN' },
  'structure.startRepair': { status: 403, code: 'FORBIDDEN' },
  'structure.getScanJob': { status: 403, code: 'FORBIDDEN' },
  'structure.cancelScanJob': { status: 403, code: 'FORBIDDEN' },
  'structure.getRepairJob': { status: 403, code: 'FORBIDDEN' },
  'structure.cancelRepairJob': { status: 403, code: 'FORBIDDEN' },
}
const refusalOf = (operationId: string) => refusals[operationId] ?? { status: 403, code: 'forbidden' }

let server: TestServer
let owner: Account
let grantless: Account
let table: Operation[]
let memoId: string
let emptyRoleId: string
let narrowKey: string
let callers: Record<Who, Principal>
const collection = 'memos'

/** A GeoJSON Feature for the geospatial importer (memos has no geo field: the permission is refused first). */
const geoFeature = JSON.stringify({
  type: 'Feature',
  geometry: { type: 'Point', coordinates: [1, 2] },
  properties: { title: 'not yours' },
})

/** The operations whose declared permission is a `resource:action` (not public, not merely signed in). */
const checked = () => table.filter((op) => op.permission !== 'public' && op.permission !== 'authenticated')

/** Path parameters for one operation: the collection, its record, an enum field, the empty role, ids that exist nowhere else. */
function pathOf(op: Operation): string {
  const values: Record<string, string> = { name: collection, id: memoId, field: 'mood', jobId: 'x1', shareId: 'x1' }
  if (op.path.startsWith('/api/v1/roles/')) values.id = emptyRoleId
  if (op.path.startsWith('/api/v1/users/')) values.id = owner.id
  if (
    op.path.startsWith('/api/v1/files/') ||
    op.path.startsWith('/api/v1/databases/') ||
    op.path.startsWith('/api/v1/storage-connections/') ||
    op.path.startsWith('/api/v1/webhooks/') ||
    op.path.startsWith('/api/v1/lenses/') ||
    op.path.startsWith('/api/v1/navigation/') ||
    op.path.startsWith('/api/v1/renderers/') ||
    op.path.startsWith('/api/v1/lens-attachments/') ||
    op.path.startsWith('/api/v1/views/') ||
    op.path.startsWith('/api/v1/containers/')
  )
    values.id = 'x1'
  return op.path.replace(/\{(\w+)\}/g, (_, param: string) => values[param] ?? 'x1')
}

/**
 * Well-formed bodies for the routes whose guard leaves the decision to the service (collections, records,
 * shares): their input is validated before the service refuses, so a malformed body would answer 400.
 */
function bodyOf(op: Operation): { body?: unknown; rawBody?: string; headers?: Record<string, string> } {
  const bodies: Record<string, unknown> = {
    'records.create': { title: 'not yours' },
    'records.update': { title: 'not yours' },
    'records.share': { userId: grantless.id, access: 'view' },
    'records.transfer': { userId: grantless.id },
    'records.bulkDelete': { ids: [memoId] },
    'records.createImportJob': {},
  }
  if (op.operationId === 'records.importNdjson')
    return { rawBody: '{"title":"not yours"}\n', headers: { 'content-type': 'application/x-ndjson' } }
  if (op.operationId === 'records.importGeo')
    return { rawBody: geoFeature, headers: { 'content-type': 'application/geo+json' } }
  if (op.operationId in bodies) return { body: bodies[op.operationId] }
  return op.method === 'GET' || op.method === 'DELETE' ? {} : { body: {} }
}

/** The same operation as an in-process caller makes it: straight on the service, with the acting principal first. */
const direct: Record<string, (s: PlinthServices, p: Principal) => Promise<unknown>> = {
  'users.list': (s, p) => s.users.list(p, 1, 10),
  'users.create': (s, p) =>
    s.users.create(p, { email: 'sneaky@example.com', password: 'a good password', name: 'x', role: 'viewer' }),
  'users.get': (s, p) => s.users.get(p, owner.id),
  'users.update': (s, p) => s.users.update(p, owner.id, { name: 'renamed' }),
  'users.delete': (s, p) => s.users.delete(p, owner.id),
  'users.resetLink': (s, p) => s.recovery.issueResetLink(p, owner.id, { ip: '127.0.0.1' }),
  'roles.list': (s, p) => s.access.listRoles(p),
  'roles.create': (s, p) => s.access.createRole(p, { name: 'sneaky' }),
  'roles.update': (s, p) => s.access.updateRole(p, emptyRoleId, { description: 'changed' }),
  'roles.delete': (s, p) => s.access.deleteRole(p, emptyRoleId),
  'roles.grants': (s, p) => s.access.grantsOf(p, emptyRoleId),
  'roles.replaceGrants': (s, p) => s.access.replaceGrants(p, emptyRoleId, []),
  'roles.preview': (s, p) => s.rolePreview.preview(p, { roleId: emptyRoleId, collection, limit: 5 }),
  'settings.get': (s, p) => s.settings.read(p),
  'settings.update': (s, p) => s.settings.update(p, { 'auth.usernameEnabled': true }),
  'projects.list': (s, p) => s.projects.list(p),
  'projects.create': (s, p) => s.projects.create(p, 'Sneaky'),
  'audit.list': (s, p) => s.audit.list(p, { page: 1, limit: 10 }),
  'databases.list': (s, p) => s.databases.list(p),
  'databases.create': (s, p) => s.databases.create(p, { name: 'sneaky', kind: 'sqlite' }),
  'databases.delete': (s, p) => s.databases.delete(p, 'x1', false),
  'storageConnections.list': (s, p) => s.storageConnections.list(p),
  'storageConnections.create': (s, p) =>
    s.storageConnections.create(p, {
      label: 'x',
      provider: 'custom',
      endpoint: 'https://s3.example.com',
      region: 'auto',
      bucketName: 'b',
      accessKeyId: 'a',
      secretAccessKey: 's',
    } as never),
  'storageConnections.get': (s, p) => s.storageConnections.get(p, 'x1'),
  'storageConnections.update': (s, p) => s.storageConnections.update(p, 'x1', { label: 'y' }),
  'storageConnections.delete': (s, p) => s.storageConnections.delete(p, 'x1'),
  'storageConnections.test': (s, p) => s.storageConnections.test(p, 'x1'),
  'operations.list': (s, p) => s.operations.catalog(p),
  'operations.get': (s, p) => s.operations.describe(p, 'math'),
  'collections.list': (s, p) => s.collections.visibleTo(p),
  'collections.create': (s, p) =>
    s.collections.create(p, { name: 'sneaky', fields: [{ name: 'title', type: 'text' }] }),
  'collections.get': (s, p) => s.collections.visible(p, collection),
  'collections.update': (s, p) => s.collections.update(p, collection, { fields: [] }),
  'collections.previewChanges': (s, p) => s.collections.preview(p, collection, { fields: [] }),
  'collections.indexAdvice': (s, p) => s.records.indexAdvice(p, collection),
  'collections.delete': (s, p) => s.collections.delete(p, collection),
  'collections.truncate': (s, p) => s.dataTools.truncate.truncate(p, collection),
  'collections.publish': (s, p) => s.dataTools.publish.publish(p, collection),
  'structure.fieldOptions': (s, p) => s.structure.fieldOptions(p, collection, 'mood'),
  'structure.collectionOptions': (s, p) => s.structure.collectionOptions(p, collection, undefined),
  'structure.scan': (s, p) => s.structure.scan(p, collection, 'mood', { limit: 10 }),
  'structure.startScan': (s, p) => s.structure.startScan(p, collection, 'mood'),
  'structure.startRepair': (s, p) => s.structure.startRepair(p, collection, 'mood', []),
  'structure.getScanJob': (s, p) => s.structure.job(p, collection, 'scan', 'x1'),
  'structure.cancelScanJob': (s, p) => s.structure.cancel(p, collection, 'scan', 'x1'),
  'structure.getRepairJob': (s, p) => s.structure.job(p, collection, 'repair', 'x1'),
  'structure.cancelRepairJob': (s, p) => s.structure.cancel(p, collection, 'repair', 'x1'),
  'records.export': (s, p) => s.exchange.exporter.run(p, collection, { format: 'json' }),
  'records.importNdjson': (s, p) =>
    s.exchange.importer.run(p, collection, '{"title":"not yours"}\n', { dryRun: false }),
  'records.importGeo': (s, p) =>
    s.exchange.geoImporter.run(p, collection, geoFeature, { format: 'geojson', dryRun: false }),
  'records.createImportJob': (s, p) => s.exchange.jobs.create(p, collection, 0),
  'records.getImportJob': (s, p) => s.exchange.jobs.get(p, collection, 'x1'),
  'records.finalizeImportJob': (s, p) => s.exchange.jobs.finalize(p, collection, 'x1', false),
  'records.bulkDelete': (s, p) => s.dataTools.bulk.delete(p, collection, [memoId], false),
  'records.transfer': (s, p) => s.dataTools.transfer.transfer(p, collection, memoId, { userId: grantless.id }),
  'records.list': (s, p) => s.records.list(p, collection, { page: 1, limit: 10 }),
  'records.create': (s, p) => s.records.create(p, collection, { title: 'not yours' }),
  'records.get': (s, p) => s.records.get(p, collection, memoId, {}),
  'records.update': (s, p) => s.records.update(p, collection, memoId, { title: 'not yours' }, null),
  'records.delete': (s, p) => s.records.delete(p, collection, memoId, false),
  'records.restore': (s, p) => s.records.restore(p, collection, memoId),
  'records.shares': (s, p) => s.shares.list(p, collection, memoId),
  'records.share': (s, p) => s.shares.share(p, collection, memoId, { userId: grantless.id, access: 'view' }),
  'records.unshare': (s, p) => s.shares.unshare(p, collection, memoId, 'x1'),
  'files.uploadToken': (s, p) => s.files.uploadToken(p, { filename: 'a.txt', mime_type: 'text/plain', size_bytes: 1 }),
  'files.confirmUpload': (s, p) => s.files.confirm(p, 'x1'),
  'files.downloadToken': (s, p) => s.files.downloadToken(p, 'x1'),
  'files.list': (s, p) => s.files.list(p, { page: 1, limit: 10 }),
  'files.regenerateAll': (s, p) => s.files.regenerate(p, {}),
  'files.get': (s, p) => s.files.get(p, 'x1'),
  'files.delete': (s, p) => s.files.delete(p, 'x1'),
  'files.regenerate': (s, p) => s.files.regenerateOne(p, 'x1'),
  // The body is never read: the check comes first (a service that read it first would throw a TypeError, not forbidden).
  'files.upload': (s, p) => s.files.upload(p, undefined as never),
  'files.replace': (s, p) => s.files.replace(p, 'x1', undefined as never),
  'files.attachVariant': (s, p) => s.files.attachVariant(p, 'x1', undefined as never),
  'realtime.stream': (s, p) =>
    s.realtime.subscribe({ principal: p, refresh: async () => p, document: null, expiresAt: null }, collection, {}),
  // Automation flows and quotas (issue 15).
  'automate.triggerTypes': (s, p) => s.automate.triggerTypes(p),
  'automateFlows.list': (s, p) => s.automate.list(p),
  'automateFlows.get': (s, p) => s.automate.get(p, 'x1'),
  'automateFlows.create': (s, p) =>
    s.automate.create(p, { name: 'x', triggerType: 'manual', triggerConfig: {}, operations: [] }),
  'automateFlows.update': (s, p) => s.automate.update(p, 'x1', { name: 'y' }),
  'automateFlows.delete': (s, p) => s.automate.delete(p, 'x1'),
  'automateFlows.duplicate': (s, p) => s.automate.duplicate(p, 'x1', {}),
  'automateFlows.export': (s, p) => s.automate.exportFlow(p, 'x1'),
  'automateFlows.import': (s, p) =>
    s.automate.importFlow(p, {
      format: 'plinth-flow-v1',
      name: 'x',
      triggerType: 'manual',
      triggerConfig: {},
      operations: [],
    }),
  'automateFlows.status': (s, p) => s.automate.setStatus(p, 'x1', { status: 'inactive' }),
  'automateFlows.publish': (s, p) => s.automate.publish(p, 'x1', {}),
  'automateFlows.versions': (s, p) => s.automate.versions(p, 'x1'),
  'automateFlows.version': (s, p) => s.automate.version(p, 'x1', 1),
  'automateFlows.rollback': (s, p) => s.automate.rollback(p, 'x1', 1),
  'automateQuotas.get': (s, p) => s.quotas.get(p),
  'automateQuotas.update': (s, p) => s.quotas.update(p, { maxFlows: 1 }),
  'emailLog.list': (s, p) => s.email.list(p, { page: 1, limit: 25 }),
  'automateFlows.execute': (s, p) => s.runs.execute(p, 'x1', {}),
  'automateFlows.test': (s, p) => s.runs.test(p, 'x1', {}),
  'automateFlows.runs': (s, p) => s.runs.listForFlow(p, 'x1', { page: 1, limit: 25 }),
  'automateRuns.list': (s, p) => s.runs.list(p, { page: 1, limit: 25 }),
  'automateRuns.get': (s, p) => s.runs.get(p, 'x1'),
  'automateRuns.delete': (s, p) => s.runs.delete(p, 'x1'),
  'automateRuns.cancel': (s, p) => s.runs.cancel(p, 'x1'),
  'automateRuns.retry': (s, p) => s.runs.retry(p, 'x1'),
  'automateRuns.cleanupStale': (s, p) => s.runs.cleanupStale(p),
  'automateFlows.trigger': (s, p) => s.triggers.triggerManually(p, 'x1', {}),
  // Record aggregation (issue 16, ops-data).
  'records.aggregate': (s, p) => s.records.aggregate(p, collection, { limit: 10 }),
  'automateScripts.list': (s, p) => s.scripts.list(p),
  'automateScripts.get': (s, p) => s.scripts.get(p, 'x1'),
  'automateScripts.create': (s, p) => s.scripts.create(p, { name: 'x', code: 'return 1' }),
  'automateScripts.update': (s, p) => s.scripts.update(p, 'x1', { name: 'y' }),
  'automateScripts.delete': (s, p) => s.scripts.delete(p, 'x1'),
  'automateScripts.test': (s, p) => s.scripts.test(p, 'x1', {}),
  // Collection webhooks (issue 16).
  'webhooks.list': (s, p) => s.webhooks.list(p),
  'webhooks.get': (s, p) => s.webhooks.get(p, 'x1'),
  'webhooks.create': (s, p) =>
    s.webhooks.create(p, {
      collection,
      events: ['record.create'],
      url: 'https://hooks.example.com/x',
      headers: {},
      active: true,
    }),
  'webhooks.update': (s, p) => s.webhooks.update(p, 'x1', { name: 'y' }),
  'webhooks.delete': (s, p) => s.webhooks.delete(p, 'x1'),
  'webhooks.deliveries': (s, p) => s.webhooks.deliveries(p, 'x1', 1, 25),
  // Search indexes (issue 17).
  'searchIndexes.list': (s, p) => s.searchIndexes.list(p),
  'searchIndexes.get': (s, p) => s.searchIndexes.get(p, collection),
  'searchIndexes.create': (s, p) =>
    s.searchIndexes.create(p, { name: 'sneaky', description: '', sources: [{ collection, fields: ['title'] }] }),
  'searchIndexes.update': (s, p) => s.searchIndexes.update(p, collection, { description: 'y' }),
  'searchIndexes.delete': (s, p) => s.searchIndexes.delete(p, collection),
  'searchIndexes.rebuild': (s, p) => s.searchIndexes.rebuild(p, collection),
  'searchIndexes.query': (s, p) => s.searchIndexes.query(p, collection, 'secret', 10),
  // File containers (issue 29, item 5).
  'containers.list': (s, p) => s.containers.list(p, 1, 25),
  'containers.get': (s, p) => s.containers.get(p, 'x1'),
  'containers.create': (s, p) =>
    s.containers.create(p, {
      name: 'sneaky',
      storageConnectionId: null,
      bucketName: null,
      prefix: '',
      visibility: 'public',
      imageSizes: [],
      maxFileBytes: null,
      allowedTypes: [],
    }),
  'containers.update': (s, p) => s.containers.update(p, 'x1', { name: 'y' }),
  'containers.delete': (s, p) => s.containers.delete(p, 'x1'),
  // Lenses (issue 17, item 5).
  'lenses.list': (s, p) => s.lenses.list(p, 1, 25),
  'lenses.get': (s, p) => s.lenses.get(p, 'x1'),
  'lenses.create': (s, p) =>
    s.lenses.create(p, {
      name: 'x',
      description: '',
      enabled: true,
      collection,
      sort: [],
      limit: 10,
      params: [],
      template: {},
    }),
  'lenses.update': (s, p) => s.lenses.update(p, 'x1', { name: 'y' }),
  'lenses.delete': (s, p) => s.lenses.delete(p, 'x1'),
  'lenses.publish': (s, p) => s.lenses.publish(p, 'x1', ''),
  'lenses.versions': (s, p) => s.lenses.versions(p, 'x1'),
  'lenses.render': (s, p) => s.lenses.render(p, 'x1', { format: 'csv', params: {} }),
  // The navigation tree (issue 29 item 2).
  'navigation.tree': (s, p) => s.navigation.tree(p),
  'navigation.list': (s, p) => s.navigation.list(p, 1, 25),
  'navigation.get': (s, p) => s.navigation.get(p, 'x1'),
  'navigation.create': (s, p) =>
    s.navigation.create(p, {
      label: 'x',
      icon: null,
      target: { kind: 'url', ref: 'https://example.com' },
      parentId: null,
    }),
  'navigation.update': (s, p) => s.navigation.update(p, 'x1', { label: 'y' }),
  'navigation.delete': (s, p) => s.navigation.delete(p, 'x1'),
  'navigation.reorder': (s, p) => s.navigation.reorder(p, { items: [] }),
  // Renderers and lens attachments (issue 29, decision 065).
  'renderers.list': (s, p) => s.renderers.list(p, 1, 25),
  'renderers.get': (s, p) => s.renderers.get(p, 'x1'),
  'renderers.create': (s, p) => s.renderers.create(p, { name: 'x', collection, kind: 'card', template: '{{title}}' }),
  'renderers.update': (s, p) => s.renderers.update(p, 'x1', { name: 'y' }),
  'renderers.delete': (s, p) => s.renderers.delete(p, 'x1'),
  'renderers.render': (s, p) => s.renderers.render(p, 'x1', memoId),
  'lensAttachments.list': (s, p) => s.lensAttachments.list(p, 1, 25),
  'lensAttachments.get': (s, p) => s.lensAttachments.get(p, 'x1'),
  'lensAttachments.create': (s, p) =>
    s.lensAttachments.create(p, { lensId: 'x1', collection, placement: 'record', label: 'x' }),
  'lensAttachments.update': (s, p) => s.lensAttachments.update(p, 'x1', { label: 'y' }),
  'lensAttachments.delete': (s, p) => s.lensAttachments.delete(p, 'x1'),
  'views.list': (s, p) => s.views.list(p, 1, 25),
  'views.get': (s, p) => s.views.get(p, 'x1'),
  'views.create': (s, p) => s.views.create(p, { name: 'x', collection, shared: false }),
  'views.update': (s, p) => s.views.update(p, 'x1', { name: 'y' }),
  'views.delete': (s, p) => s.views.delete(p, 'x1'),
  'views.records': (s, p) => s.views.records(p, 'x1', { page: 1 }),
  // Blueprint export (issue 30 item 7): the service checks system/blueprints:read before reading anything.
  'blueprints.export': (s, p) =>
    exportBlueprint(
      { access: s.access, providers: () => brickProviders(s) },
      p,
      exportRequest({ namespace: 'memo', collections: collection }),
    ),
  // Tool server (issue 18): the invocation log; the other /api/v1/mcp routes take any sk- key.
  'mcp.log': (s, p) => s.mcp.log(p, { page: 1, limit: 25 }),
}

const call = (
  method: string,
  path: string,
  token: string,
  extra: { body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<Reply> => server.request(method, path, { token, ...extra })

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  table = await operations(server)
  const fields = [
    { name: 'title', type: 'text', required: false },
    { name: 'mood', type: 'enum', required: false, enumValues: ['calm', 'busy'] },
  ]
  expect(
    (
      await call('POST', '/api/v1/collections', owner.token, {
        body: { name: collection, fields, accessControl: { preset: 'team', sharing: true } },
      })
    ).status,
  ).toBe(201)
  const record = await call('POST', `/api/v1/collections/${collection}/records`, owner.token, {
    body: { title: 'secret', mood: 'calm' },
  })
  expect(record.status, record.text).toBe(201)
  memoId = record.body.id
  const role = await call('POST', '/api/v1/roles', owner.token, {
    body: { name: 'grantless', description: 'holds no grant' },
  })
  expect(role.status, role.text).toBe(201)
  emptyRoleId = role.body.data.id
  grantless = await createAccount(server, owner.token, { role: 'grantless' })
  // The owner is super_admin: only the key's own capabilities bound it (the ceiling of decision 022).
  const key = await call('POST', '/api/auth/api-keys', owner.token, {
    body: { label: 'narrow', capabilities: ['collections/elsewhere:read'] },
  })
  expect(key.status, key.text).toBe(201)
  narrowKey = key.body.raw
  const projectId = server.app.defaultProject.id
  const session = { id: 'direct-call', expiresAt: 4_000_000_000 }
  callers = {
    'grantless user': principals.user(
      { homeProjectId: projectId, userId: grantless.id, roleId: emptyRoleId, roleName: 'grantless', superAdmin: false },
      session,
    ),
    'narrow key': principals.apiKey(
      { id: key.body.id, capabilities: ['collections/elsewhere:read'] },
      {
        homeProjectId: projectId,
        userId: owner.id,
        roleId: await roleId(server, owner.token, 'super_admin'),
        roleName: 'super_admin',
        superAdmin: true,
      },
    ),
  }
})
afterAll(async () => {
  await server?.stop()
})

describe('the route table, for callers lacking the declared permission', () => {
  it('the direct-call table names exactly the operations with a declared permission', () => {
    const ids = checked()
      .map((op) => op.operationId)
      .sort()
    expect(ids.length).toBeGreaterThan(60)
    expect(Object.keys(direct).sort()).toEqual(ids)
    for (const id of Object.keys(refusals)) expect(ids, id).toContain(id)
  })

  for (const who of ['grantless user', 'narrow key'] as const) {
    it(`every such operation refuses a ${who} over HTTP`, async () => {
      const token = who === 'grantless user' ? grantless.token : narrowKey
      const wrong: string[] = []
      for (const op of checked()) {
        const reply = await call(op.method, pathOf(op), token, bodyOf(op))
        const expected = refusalOf(op.operationId)
        const ok =
          expected.code === null
            ? reply.status === 200 && reply.body?.data?.length === 0
            : reply.status === expected.status && reply.body?.error === expected.code
        if (!ok)
          wrong.push(`${op.operationId} ${op.method} ${pathOf(op)} → ${reply.status} ${reply.text.slice(0, 160)}`)
      }
      expect(wrong).toEqual([])
    })

    it(`every such operation's service refuses a ${who} called directly`, async () => {
      const wrong: string[] = []
      for (const op of checked()) {
        const run = direct[op.operationId]
        if (!run) continue
        const expected = refusalOf(op.operationId)
        try {
          const result = await run(server.app.services, callers[who])
          if (expected.code !== null || !Array.isArray(result) || result.length > 0)
            wrong.push(`${op.operationId} → allowed: ${JSON.stringify(result).slice(0, 160)}`)
        } catch (err: any) {
          if (expected.code === null || err?.code !== expected.code)
            wrong.push(`${op.operationId} → ${err?.code ?? err}: ${String(err?.message).slice(0, 160)}`)
        }
      }
      expect(wrong).toEqual([])
    })
  }

  it('nothing the refused calls tried was written', async () => {
    const records = await call('GET', `/api/v1/collections/${collection}/records`, owner.token)
    expect(records.body.data.map((r: any) => r.title)).toEqual(['secret'])
    const roles = await call('GET', '/api/v1/roles', owner.token)
    expect(roles.body.data.map((r: any) => r.name)).not.toContain('sneaky')
    expect((await call('GET', '/api/v1/collections', owner.token)).body.data.map((c: any) => c.name)).toEqual([
      collection,
    ])
    expect((await call('GET', `/api/v1/users/${owner.id}`, owner.token)).body.data.name).toBe('Owner')
  })
})

describe('system work through the services', () => {
  it('may do maintenance in its project, but nothing of the instance', async () => {
    const system = principals.system(server.app.defaultProject.id, 'test')
    const { services } = server.app
    expect((await services.users.list(system, 1, 10)).total).toBeGreaterThan(0)
    expect((await services.access.listRoles(system)).map((r) => r.name)).toContain('grantless')
    expect((await services.records.list(system, collection, { page: 1, limit: 10 })).data).toHaveLength(1)
    await expect(services.projects.list(system)).rejects.toMatchObject({ code: 'forbidden' })
    await expect(services.projects.create(system, 'By a sweep')).rejects.toMatchObject({ code: 'forbidden' })
  })

  it('is refused wherever a person is required: API keys, capability tokens, shares granted by it', async () => {
    const system = principals.system(server.app.defaultProject.id, 'test')
    const { services } = server.app
    await expect(
      services.apiKeys.create(system, { label: 'x', capabilities: ['collections/memos:read'] }),
    ).rejects.toMatchObject({ code: 'forbidden' })
    await expect(services.apiKeys.list(system)).rejects.toMatchObject({ code: 'forbidden' })
    await expect(services.capabilityTokens.mint(system, { collection, documentId: memoId })).rejects.toMatchObject({
      code: 'forbidden',
    })
    await expect(
      services.shares.share(system, collection, memoId, { userId: grantless.id, access: 'view' }),
    ).rejects.toMatchObject({ code: 'forbidden' })
    const shares = await call('GET', `/api/v1/collections/${collection}/records/${memoId}/shares`, owner.token)
    expect(shares.body.data).toEqual([])
  })
})
