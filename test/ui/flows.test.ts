import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { browserMissing, expectAccessible, launchBrowser, signInThroughUi, type Browser } from '../support/browser.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'

// The flows screens in headless Chromium on a fresh server: a webhook flow built through the UI from
// three steps whose forms come from the operations' JSON Schemas, a config the server refuses shown with
// its field, a dry run with each step's output, publish, activate, a run and its step log, rollback,
// cancel and retry, the quotas; each screen accessible (axe) and without console errors.

let server: TestServer
let browser: Browser
let owner: Account
beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  if (browserMissing) return
  browser = await launchBrowser(server)
  // Signed in once through the UI's form: the cookie session serves every tab of the context after.
  const { page } = await browser.open('/_/')
  await signInThroughUi(page, owner.email, owner.password)
  await page.close()
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

const api = (method: string, path: string, body?: unknown) =>
  server.request(method, `/api/v1/automate${path}`, { token: owner.token, ...(body === undefined ? {} : { body }) })

/** The problems a page saw, without the signed-out probe of the session before signing in. */
const real = async (problems: () => Promise<string[]>) => (await problems()).filter((p) => !p.includes('status of 401'))

const step = (page: Page, n: number) => page.getByRole('region', { name: new RegExp(`^${n}\\. `) })

async function addStep(page: Page, type: string) {
  await page.getByLabel('Operation', { exact: true }).selectOption(type)
  await page.getByRole('button', { name: 'Add step' }).click()
}

describe.skipIf(browserMissing)('admin UI: flows', () => {
  let flowId: string

  it('builds a webhook flow from generated forms, shows a refusal at its field, dry-runs, publishes and runs it', async () => {
    const { page, problems } = await browser.open('/_/flows')
    page.setDefaultTimeout(10_000)
    await page.getByRole('heading', { name: 'Flows', level: 1 }).waitFor()
    // Every project has its system flows (archival, limit check, monthly summary).
    await page.getByRole('row', { name: /System: archival/ }).waitFor()
    await expectAccessible(page, 'flows list')

    // Create: a name and a trigger type.
    await page.getByRole('button', { name: 'New flow' }).click()
    await page.getByLabel('Name').fill('Double it')
    await page.getByLabel('Trigger', { exact: true }).selectOption('webhook')
    await page.getByRole('button', { name: 'Create the flow' }).click()
    await page.getByRole('heading', { name: 'Flow: Double it' }).waitFor()
    flowId = page.url().split('/').pop()!
    expect((await api('GET', `/flows/${flowId}`)).body.data).toMatchObject({
      name: 'Double it',
      triggerType: 'webhook',
    })

    // The trigger's form comes from its schema: the webhook's methods as choices, its secret, its allowlist.
    const trigger = page.getByRole('region', { name: 'Trigger' })
    await trigger.getByRole('group', { name: 'allowed_methods' }).waitFor()
    expect(await trigger.getByRole('checkbox', { name: 'POST' }).isChecked()).toBe(true)
    await trigger.getByRole('checkbox', { name: 'PUT' }).check()
    await expect.poll(() => page.getByText(/Webhook URL/).textContent()).toContain('/api/v1/automate/webhook/')

    // Three steps; each card's form is generated from GET /operations/:type.
    await addStep(page, 'set_variable')
    const first = step(page, 1)
    await first.getByLabel('key (required)', { exact: true }).fill('qty')
    await first.getByLabel('value (required)', { exact: true }).fill('{{$trigger.body.qty}}')
    await first.getByLabel('Step key').fill('qty')

    await addStep(page, 'math')
    const second = step(page, 2)
    // An enum is a select of its values; the hint is the schema's description.
    await second.getByLabel('operation (required)').selectOption({ label: 'formula' })
    await second.getByText('What to compute').waitFor()
    await second.getByLabel('Step key').fill('double')
    // Template hints: the trigger's payload and the steps before this one.
    await second.getByText('Template variables for this step').click()
    await second.getByText('{{$steps.qty}}', { exact: true }).waitFor()
    await second.getByLabel('formula').fill('{{$steps.qty}} * 2')
    await second.getByLabel('precision').fill('0')

    await addStep(page, 'log')
    const third = step(page, 3)
    await third.getByLabel('Step key').fill('say')
    // A template with an unknown root: the server refuses it on save, naming the step and the field.
    await third.getByLabel('message (required)').fill('doubled to {{$bad.result}}')
    await page.getByRole('button', { name: 'Save draft' }).click()
    const alert = page.getByRole('alert').first()
    await expect.poll(() => alert.textContent()).toContain('$bad is not available in templates')
    expect(await alert.textContent()).toContain('operations[2].config.message')
    const messageField = third.getByLabel('message (required)')
    expect(await messageField.getAttribute('aria-invalid')).toBe('true')
    await expect
      .poll(() => third.locator('.field-invalid .field-error').first().textContent())
      .toContain('$bad is not available')
    expect((await api('GET', `/flows/${flowId}`)).body.data.operations).toEqual([])

    await messageField.fill('doubled to {{$steps.double.result}}')
    await page.getByRole('button', { name: 'Save draft' }).click()
    await page.getByText('Draft saved.').waitFor()
    const saved = (await api('GET', `/flows/${flowId}`)).body.data
    expect(saved.triggerConfig.allowed_methods).toEqual(['POST', 'PUT'])
    expect(saved.operations).toEqual([
      { key: 'qty', type: 'set_variable', config: { key: 'qty', value: '{{$trigger.body.qty}}' }, onError: 'stop' },
      {
        key: 'double',
        type: 'math',
        config: { operation: 'formula', formula: '{{$steps.qty}} * 2', precision: 0 },
        onError: 'stop',
      },
      { key: 'say', type: 'log', config: { message: 'doubled to {{$steps.double.result}}' }, onError: 'stop' },
    ])

    // Reorder and back: the order is what is saved.
    await page.getByRole('button', { name: 'Move step say up' }).click()
    await expect.poll(() => step(page, 2).getByRole('heading').first().textContent()).toContain('say')
    await page.getByRole('button', { name: 'Move step say down' }).click()
    await expect.poll(() => step(page, 3).getByRole('heading').first().textContent()).toContain('say')

    // Dry run: each step's input (its config, templates applied) and output.
    await page.getByLabel('Trigger payload (JSON)').fill('{"qty": 21}')
    await page.getByRole('button', { name: 'Dry run' }).click()
    const trace = page.getByRole('region', { name: 'Dry run result' })
    await trace.waitFor()
    expect(await trace.getByLabel('Output of double').textContent()).toContain('"result": 42')
    expect(await trace.getByLabel('Output of say').textContent()).toContain('doubled to 42')
    // The input is the config with its templates applied (credentials masked).
    expect(await trace.getByLabel('Input of double').textContent()).toContain('21 * 2')
    expect(await trace.textContent()).toContain('completed')
    // The outputs seen feed the template hints of later steps.
    await third.getByText('Template variables for this step').click()
    await third.getByText('{{$steps.double.result}}', { exact: true }).waitFor()
    await expectAccessible(page, 'flow editor')

    // Publish and activate.
    await page.getByLabel('What changed (optional)').fill('first')
    await page.getByRole('button', { name: 'Publish', exact: true }).click()
    await page.getByText('Published version 1.').waitFor()
    await page.getByRole('cell', { name: 'first' }).waitFor()
    await page.getByRole('button', { name: 'Activate' }).click()
    await page.getByText('The flow is active: its triggers').waitFor()
    expect((await api('GET', `/flows/${flowId}`)).body.data).toMatchObject({ status: 'active', publishedVersion: 1 })

    // Run it: the runs screen opens on the new run, with its step trace.
    await page.getByLabel('Run payload (JSON)').fill('{"qty": 5}')
    await page.getByRole('button', { name: 'Run now' }).click()
    await page.getByRole('heading', { name: 'Runs: Double it' }).waitFor()
    const detail = page.locator('.flow-run-detail')
    await expect
      .poll(() => detail.locator('.flow-facts .badge').first().textContent(), { timeout: 15_000 })
      .toBe('completed')
    expect(await detail.getByLabel('Output of say').textContent()).toContain('doubled to 10')
    expect(await detail.getByLabel('Input of double').textContent()).toContain('"formula": "5 * 2"')
    await page.getByRole('cell', { name: 'completed' }).first().waitFor()
    // The run as the API stored it.
    const runs = (await api('GET', `/flows/${flowId}/runs`)).body
    expect(runs.total).toBe(1)
    expect(runs.data[0]).toMatchObject({ status: 'completed', version: 1 })
    // Quotas: usage against the limits.
    await page.getByRole('heading', { name: 'Project quotas' }).waitFor()
    await expect.poll(() => page.locator('.flow-quotas').textContent()).toMatch(/Runs this hour\s*\d+ \/ 500/)
    await expectAccessible(page, 'flow runs')

    // The list shows the flow with its trigger, status and last run.
    await page.getByRole('link', { name: 'Flows' }).click()
    const row = page.getByRole('row', { name: /Double it/ })
    await row.waitFor()
    expect(await row.textContent()).toContain('Webhook')
    expect(await row.textContent()).toContain('active')
    expect(await row.textContent()).toContain('v1 published')
    await expect.poll(() => row.textContent()).toContain('1 runs')
    await expectAccessible(page, 'flows list')
    // The refused save is the one expected failure the browser logged.
    expect((await real(problems)).filter((p) => !p.includes('status of 422'))).toEqual([])
  }, 120_000)

  it('publishes a second version and rolls back to the first', async () => {
    const { page, problems } = await browser.open(`/_/flows/${flowId}`)
    const third = step(page, 3)
    await third.getByLabel('message (required)').fill('twice is {{$steps.double.result}}')
    await page.getByRole('button', { name: 'Publish', exact: true }).click()
    await page.getByText('Published version 2.').waitFor()
    await page.getByRole('button', { name: 'Roll back to v1' }).waitFor()
    expect((await api('GET', `/flows/${flowId}`)).body.data.operations[2].config.message).toBe(
      'twice is {{$steps.double.result}}',
    )
    // A version as published.
    await page.getByRole('button', { name: 'View v2' }).click()
    const view = page.getByRole('dialog', { name: 'Version 2' })
    await expect
      .poll(() => view.getByLabel('Configuration of say in version 2').textContent())
      .toContain('twice is {{$steps.double.result}}')
    await expectAccessible(page, 'version dialog')
    await view.getByRole('button', { name: 'Close' }).click()
    await page.getByRole('button', { name: 'Roll back to v1' }).click()
    const dialog = page.getByRole('dialog', { name: 'Roll back to version 1?' })
    await expectAccessible(page, 'rollback dialog')
    await dialog.getByRole('button', { name: 'Roll back' }).click()
    await page.getByText('Rolled back to version 1').waitFor()
    expect(await page.getByText('The saved steps differ').count()).toBe(0)
    expect(await step(page, 3).getByLabel('message (required)').inputValue()).toBe(
      'doubled to {{$steps.double.result}}',
    )
    const flow = (await api('GET', `/flows/${flowId}`)).body.data
    expect(flow).toMatchObject({ publishedVersion: 1, currentVersion: 2 })
    expect(flow.operations[2].config.message).toBe('doubled to {{$steps.double.result}}')
    expect(await real(problems)).toEqual([])
  })

  it('cancels a running run and retries it from the runs screen', async () => {
    const created = await api('POST', '/flows', {
      name: 'Slow',
      triggerType: 'manual',
      triggerConfig: {},
      operations: [{ key: 'wait', type: 'delay', config: { ms: 20000 } }],
    })
    const slow = created.body.data.id as string
    expect((await api('POST', `/flows/${slow}/publish`, {})).status).toBe(200)
    expect((await api('PATCH', `/flows/${slow}/status`, { status: 'active' })).status).toBe(200)
    const started = await api('POST', `/flows/${slow}/execute`, {})
    expect(started.status).toBe(202)
    const runId = started.body.data.runId as string

    const { page, problems } = await browser.open(`/_/flows/${slow}/runs?run=${runId}`)
    const detail = page.locator('.flow-run-detail')
    await page.getByRole('button', { name: 'Cancel run' }).click()
    await expect.poll(() => detail.locator('.flow-facts .badge').first().textContent()).toBe('cancelled')
    expect((await api('GET', `/runs/${runId}`)).body.data.status).toBe('cancelled')

    await page.getByRole('button', { name: 'Retry' }).click()
    await expect.poll(() => page.url()).not.toContain(runId)
    const retried = new URL(page.url()).searchParams.get('run')!
    expect((await api('GET', `/runs/${retried}`)).body.data).toMatchObject({ retryOf: runId })
    await expect.poll(() => page.getByRole('row').count()).toBe(3)
    await page.getByRole('button', { name: 'Cancel run' }).click()
    await expect.poll(async () => (await api('GET', `/runs/${retried}`)).body.data.status).toBe('cancelled')
    await expectAccessible(page, 'runs with a cancelled run')
    expect(await real(problems)).toEqual([])
  })

  it('every operation of the catalog gets a form generated from its schema', async () => {
    const created = await api('POST', '/flows', {
      name: 'Catalog',
      triggerType: 'webhook',
      triggerConfig: {},
      operations: [],
    })
    const { page, problems } = await browser.open(`/_/flows/${created.body.data.id}`)
    page.setDefaultTimeout(10_000)
    await page.getByRole('heading', { name: 'Flow: Catalog' }).waitFor()
    const select = page.getByLabel('Operation', { exact: true })
    await expect.poll(() => select.locator('option').count()).toBeGreaterThan(30)
    const types = (await select
      .locator('option')
      .evaluateAll((options) =>
        options.map((o) => (o as unknown as { value: string }).value).filter(Boolean),
      )) as string[]
    // The catalog as the API lists it, system operations left out.
    const catalog = (await api('GET', '/operations')).body.data as { type: string; system: boolean }[]
    expect(types.sort()).toEqual(
      catalog
        .filter((o) => !o.system)
        .map((o) => o.type)
        .sort(),
    )
    for (const type of types) await addStep(page, type)
    await expect.poll(() => page.getByText('Loading the form…').count(), { timeout: 20_000 }).toBe(0)
    expect(await page.locator('.flow-step').count()).toBe(types.length)
    // Each card has its form: at least one labelled control under Configuration, none left as a bare error.
    for (let i = 1; i <= types.length; i++) {
      const card = step(page, i)
      expect(
        await card.locator('.flow-step-config').locator('input, select, textarea').count(),
        types[i - 1],
      ).toBeGreaterThan(0)
    }
    // A few shapes: an enum (a select), a oneOf told by a constant (http_request's auth), a list of values.
    const http = step(page, types.indexOf('http_request') + 1)
    await http.getByLabel('type', { exact: true }).selectOption({ label: 'basic' })
    await http.getByLabel('username (required)').fill('ann')
    // An object of names to values (headers): a row each.
    await http.getByRole('button', { name: 'Add to headers' }).click()
    await http.getByLabel('headers 1 name').fill('X-Trace')
    await http.getByLabel('headers 1 value').fill('{{$run.id}}')
    await http.getByRole('button', { name: 'Edit as JSON' }).click()
    const json = JSON.parse(await http.getByLabel('Configuration of http_request (JSON)').inputValue())
    expect(json).toEqual({ auth: { type: 'basic', username: 'ann' }, headers: { 'X-Trace': '{{$run.id}}' } })
    await expectAccessible(page, `editor with ${types.length} steps`)
    expect(await real(problems)).toEqual([])
  }, 120_000)

  it('a manual flow asks its input fields and the confirmation, then runs', async () => {
    const created = await api('POST', '/flows', {
      name: 'Ask first',
      triggerType: 'manual',
      triggerConfig: { input_fields: [{ name: 'reason', required: true }], confirm: { message: 'Really send it?' } },
      operations: [{ key: 'say', type: 'log', config: { message: 'because {{$trigger.body.input.reason}}' } }],
    })
    const id = created.body.data.id as string
    expect((await api('POST', `/flows/${id}/publish`, {})).status).toBe(200)
    expect((await api('PATCH', `/flows/${id}/status`, { status: 'active' })).status).toBe(200)
    const { page, problems } = await browser.open(`/_/flows/${id}`)
    // The trigger's form: the input fields as a list of small forms.
    const trigger = page.getByRole('region', { name: 'Trigger' })
    await trigger.getByRole('group', { name: 'input_fields 1' }).waitFor()
    expect(await trigger.getByLabel('name (required)').inputValue()).toBe('reason')
    // The step may use the input fields.
    await step(page, 1).getByText('Template variables for this step').click()
    await step(page, 1).getByText('{{$trigger.body.input.reason}}', { exact: true }).waitFor()
    // Whom runs act as: the roles the owner may delegate to are offered.
    await expect.poll(() => page.getByLabel('Runs act as').locator('option').count()).toBeGreaterThan(2)
    await page.getByLabel('Runs act as').selectOption({ label: 'Role: editor' })
    await page.getByRole('button', { name: 'Save draft' }).click()
    await page.getByText('Draft saved.').waitFor()
    expect((await api('GET', `/flows/${id}`)).body.data.runAs).toMatch(/^role:/)
    const run = page.getByRole('region', { name: 'Run now' })
    await run.getByLabel('reason (required)').fill('it is Friday')
    await run.getByLabel('Really send it?').check()
    await run.getByRole('button', { name: 'Run now' }).click()
    await page.getByRole('heading', { name: 'Runs: Ask first' }).waitFor()
    const detail = page.locator('.flow-run-detail')
    await expect.poll(() => detail.locator('.flow-facts .badge').first().textContent()).toBe('completed')
    expect(await detail.getByLabel('Output of say').textContent()).toContain('because it is Friday')

    // Duplicate, then delete the copy.
    await page.getByRole('link', { name: 'Edit the flow' }).click()
    await page.getByRole('button', { name: 'Duplicate' }).click()
    await page.getByRole('heading', { name: 'Flow: Ask first (copy)' }).waitFor()
    const copy = page.url().split('/').pop()!
    expect(copy).not.toBe(id)
    expect((await api('GET', `/flows/${copy}`)).body.data).toMatchObject({ status: 'draft', name: 'Ask first (copy)' })
    await page.getByRole('button', { name: 'Delete this flow' }).click()
    await page.getByRole('dialog', { name: 'Delete Ask first (copy)?' }).getByRole('button', { name: 'Delete' }).click()
    await page.getByRole('heading', { name: 'Flows', level: 1 }).waitFor()
    expect((await api('GET', `/flows/${copy}`)).status).toBe(404)
    await page.getByRole('row', { name: /Ask first/ }).waitFor()
    expect(await page.getByRole('row', { name: /Ask first \(copy\)/ }).count()).toBe(0)
    expect(await real(problems)).toEqual([])
  })

  it('a schedule the server will not activate shows why under its field', async () => {
    const created = await api('POST', '/flows', {
      name: 'Nightly',
      triggerType: 'schedule',
      triggerConfig: { cron: 'every night', timezone: 'UTC' },
      operations: [{ key: 'say', type: 'log', config: { message: 'tick' } }],
    })
    const id = created.body.data.id as string
    expect((await api('POST', `/flows/${id}/publish`, {})).status).toBe(200)
    const { page, problems } = await browser.open(`/_/flows/${id}`)
    await page.getByRole('button', { name: 'Activate' }).click()
    await expect.poll(() => page.getByRole('alert').first().textContent()).toMatch(/\w/)
    const cron = page.getByRole('region', { name: 'Trigger' }).getByLabel('cron (required)')
    await expect.poll(() => cron.getAttribute('aria-invalid')).toBe('true')
    expect((await api('GET', `/flows/${id}`)).body.data.status).toBe('draft')
    await expectAccessible(page, 'a refused activation')
    expect((await real(problems)).filter((p) => !p.includes('status of 422'))).toEqual([])
  })

  it('a 320 px screen in the dark: the editor still fits', async () => {
    const { page } = await browser.open(`/_/flows/${flowId}`, { colorScheme: 'dark', width: 320 })
    await page.getByRole('heading', { name: 'Flow: Double it' }).waitFor()
    await step(page, 3).waitFor()
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(320)
    await expectAccessible(page, 'flow editor, dark, 320 px')
  })
})
