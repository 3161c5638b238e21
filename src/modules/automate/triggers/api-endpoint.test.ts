import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import { principals, type Principal } from '../../../lib/principal.js'
import { callEndpoint } from './api-endpoint.js'
import { createFakeFlows, createFakeRuns, makeFlow } from './fakes.js'

const member = principals.user(
  { homeProjectId: 'p1', userId: 'u1', roleId: 'r1', roleName: 'editor', superAdmin: false },
  { id: 's', expiresAt: 2e9 },
)
const anonymous = principals.anonymous('p1')

describe('api_endpoint', () => {
  const securedPost = makeFlow('api_endpoint', {})
  const openGet = makeFlow('api_endpoint', { method: 'GET', require_auth: false })
  function setup() {
    const flows = createFakeFlows([securedPost, openGet])
    const runs = createFakeRuns()
    const asked: string[] = []
    const authorize = async (principal: Principal, permission: string) => {
      asked.push(permission)
      if (principal.kind === 'anonymous') throw new AppError('unauthorized', 'Sign in to do this')
    }
    return { deps: { flows: flows.lookup, runs: runs.runs, authorize }, runs, asked }
  }
  const call = (flowId: string, method = 'POST') => ({ flowId, method, input: async () => ({ a: 1 }) })

  it('needs system/automate:execute by default and starts a run initiated by the caller', async () => {
    const { deps, runs, asked } = setup()
    expect(await callEndpoint(deps, member, call(securedPost.id))).toMatchObject({
      runId: 'run1',
      flowId: securedPost.id,
      status: 'running',
    })
    expect(asked).toEqual(['system/automate:execute'])
    expect(runs.calls[0]).toMatchObject({
      initiator: member,
      trigger: { type: 'api_endpoint', method: 'POST', body: { a: 1 } },
    })
    await expect(callEndpoint(deps, anonymous, call(securedPost.id))).rejects.toMatchObject({ status: 401 })
    expect(runs.calls).toHaveLength(1)
  })

  it('lets anyone call a flow without require_auth (no initiator), only with its method', async () => {
    const { deps, runs, asked } = setup()
    await callEndpoint(deps, anonymous, call(openGet.id, 'GET'))
    expect(asked).toEqual([])
    expect(runs.calls[0]).toMatchObject({ initiator: null, trigger: { method: 'GET' } })
    await expect(callEndpoint(deps, anonymous, call(openGet.id, 'POST'))).rejects.toMatchObject({
      status: 405,
      headers: { Allow: 'GET' },
    })
    await expect(callEndpoint(deps, anonymous, call('missing', 'GET'))).rejects.toMatchObject({ status: 404 })
    await expect(callEndpoint(deps, principals.anonymous('p2'), call(openGet.id, 'GET'))).rejects.toMatchObject({
      status: 404,
    })
    expect(runs.calls).toHaveLength(1)
  })
})
