import { describe, expect, it } from 'vitest'
import {
  consentNeeded,
  formatDiagnostic,
  formatInstall,
  formatPlan,
  formatValidation,
  formatVerdict,
  palette,
  wantsColour,
} from './print.js'
import type { Install, PlanResult, Verdict } from './types.js'

const verdict = (over: Partial<Verdict>): Verdict => ({
  brickId: 'b',
  kind: 'collection',
  verdict: 'CREATE',
  reason: null,
  changedPaths: [],
  warnings: [],
  resourceRef: null,
  requiresConsent: false,
  ...over,
})

const plan = (over: Partial<PlanResult>): PlanResult => ({
  ok: true,
  installable: true,
  diagnostics: [],
  blueprint: { id: 'help-desk', name: 'Help desk', version: '1.2.0' },
  baseline: null,
  verdicts: [],
  orphans: [],
  missingSecrets: [],
  ...over,
})

describe('formatDiagnostic', () => {
  it.each([
    {
      d: { severity: 'error', code: 'brick.invalid_json', message: 'not JSON', line: 19, brickId: 'tickets' },
      text: 'app.md:19: error brick.invalid_json [tickets] not JSON',
    },
    {
      d: { severity: 'warning', code: 'envelope.removed_key', message: 'publisher is gone', line: 3, brickId: null },
      text: 'app.md:3: warning envelope.removed_key publisher is gone',
    },
    {
      d: { severity: 'error', code: 'envelope.missing', message: 'no front matter', line: null, brickId: null },
      text: 'app.md: error envelope.missing no front matter',
    },
  ])('$text', ({ d, text }) => {
    expect(formatDiagnostic('app.md', d)).toBe(text)
  })

  it('colours the severity only when asked', () => {
    const d = { severity: 'error', code: 'x.y', message: 'm', line: 1, brickId: null }
    expect(formatDiagnostic('f', d, palette(true))).toBe('f:1: \u001b[31merror\u001b[39m x.y m')
  })
})

describe('formatValidation', () => {
  it('a sound document: its name, version, bricks and warnings counted', () => {
    const text = formatValidation('app.md', {
      ok: true,
      diagnostics: [{ severity: 'warning', code: 'a.b', message: 'careful', line: 2, brickId: null }],
      blueprint: { id: 'help-desk', name: 'Help desk', version: '1.2.0' },
      bricks: [
        { id: 'a', kind: 'role' },
        { id: 'b', kind: 'nav' },
      ],
    })
    expect(text).toBe('app.md:2: warning a.b careful\napp.md: ok: Help desk 1.2.0 (help-desk), 2 bricks (1 warning)\n')
  })

  it('a failing document: every diagnostic, then the count', () => {
    const text = formatValidation('app.md', {
      ok: false,
      diagnostics: [
        { severity: 'error', code: 'a.b', message: 'one', line: 2, brickId: null },
        { severity: 'error', code: 'c.d', message: 'two', line: null, brickId: 'x' },
      ],
      blueprint: { id: null, name: null, version: null },
      bricks: [],
    })
    expect(text).toBe('app.md:2: error a.b one\napp.md: error c.d [x] two\napp.md: invalid: 2 errors\n')
  })
})

describe('formatVerdict', () => {
  it.each([
    { v: verdict({ brickId: 'tickets' }), text: '+ CREATE collection tickets' },
    {
      v: verdict({ verdict: 'UPDATE', brickId: 'tickets', changedPaths: ['fields', 'accessPreset'] }),
      text: '~ UPDATE collection tickets (changed: fields, accessPreset)',
    },
    { v: verdict({ verdict: 'NOOP', kind: 'role', brickId: 'agents' }), text: '= NOOP role agents' },
    {
      v: verdict({ verdict: 'NOOP', kind: 'grants', brickId: 'g', requiresConsent: true, actionIds: [] }),
      text: '= NOOP grants g',
    },
    {
      v: verdict({ verdict: 'UPDATE', kind: 'grants', brickId: 'g', requiresConsent: true, actionIds: ['a1'] }),
      text: '~ UPDATE grants g [needs consent]',
    },
    {
      v: verdict({ verdict: 'BLOCKED', kind: 'grants', brickId: 'g', reason: 'read.permission_missing' }),
      text: '! BLOCKED grants g: read.permission_missing',
    },
    {
      v: verdict({ verdict: 'BLOCKED', kind: 'grants', brickId: 'g', reason: 'x.y', requiresConsent: true }),
      text: '! BLOCKED grants g: x.y',
    },
    {
      v: verdict({ verdict: 'ADOPT', brickId: 't', changedPaths: ['fields'], requiresConsent: true }),
      text: '~ ADOPT collection t (changed: fields) [needs consent]',
    },
    { v: verdict({ verdict: 'SKIPPED', kind: 'nav', brickId: 'menu' }), text: '. SKIPPED nav menu' },
    { v: verdict({ verdict: 'CLAIMED', brickId: 't' }), text: 'x CLAIMED collection t' },
    { v: verdict({ verdict: 'RECREATE', brickId: 't' }), text: '+ RECREATE collection t' },
    {
      v: verdict({ verdict: 'DRIFTED', brickId: 't', changedPaths: ['name'] }),
      text: '~ DRIFTED collection t (changed: name)',
    },
    { v: verdict({ verdict: 'SOMETHING_NEW', brickId: 't' }), text: '? SOMETHING_NEW collection t' },
    {
      v: verdict({ brickId: 'v', kind: 'view', warnings: [{ code: 'view.x', message: 'note this' }] }),
      text: '+ CREATE view v\n    warning view.x: note this',
    },
  ])('$text', ({ v, text }) => {
    expect(formatVerdict(v)).toBe(text)
  })
})

describe('formatPlan', () => {
  it('a diff: heading, a line per verdict, orphans, missing secrets, consent, counts', () => {
    const p = plan({
      baseline: { installId: 'ins_1', version: '1.1.0' },
      diagnostics: [{ severity: 'warning', code: 'plan.version_downgrade', message: 'older', line: 4, brickId: null }],
      verdicts: [
        verdict({ brickId: 'tickets', verdict: 'UPDATE', changedPaths: ['fields'] }),
        verdict({ brickId: 'agents', kind: 'role', verdict: 'NOOP' }),
        verdict({ brickId: 'g', kind: 'grants', requiresConsent: true }),
        verdict({ brickId: 'notes', verdict: 'CREATE' }),
      ],
      orphans: [{ brickId: 'old', kind: 'view', resourceRef: 'v_123' }],
      missingSecrets: ['slackToken'],
    })
    expect(consentNeeded(p)).toEqual(['g'])
    expect(formatPlan('app.md', p)).toBe(
      [
        'app.md:4: warning plan.version_downgrade older',
        'Plan for Help desk 1.2.0 (help-desk), against install ins_1 (1.1.0):',
        '~ UPDATE collection tickets (changed: fields)',
        '= NOOP role agents',
        '+ CREATE grants g [needs consent]',
        '+ CREATE collection notes',
        '- orphan view old (v_123)',
        '  (orphans are left in place: delete them yourself if unwanted)',
        'Missing secrets: slackToken (give each as PLINTH_SECRET_<name> in the environment)',
        'Needs consent: g',
        '1 UPDATE, 1 NOOP, 2 CREATE, 1 orphan: installable',
        '',
      ].join('\n'),
    )
  })

  it('a blocked plan says it is not installable, and asks no consent for what will not be applied', () => {
    const p = plan({
      installable: false,
      verdicts: [
        verdict({ brickId: 'r', kind: 'role', verdict: 'BLOCKED', reason: 'name.taken', requiresConsent: true }),
      ],
    })
    expect(consentNeeded(p)).toEqual([])
    expect(formatPlan('a.md', p)).toBe(
      'Plan for Help desk 1.2.0 (help-desk), new:\n! BLOCKED role r: name.taken\n1 BLOCKED: not installable\n',
    )
  })

  it('a failing document: its diagnostics and nothing planned', () => {
    const p = plan({
      ok: false,
      installable: false,
      diagnostics: [
        { severity: 'error', code: 'envelope.missing', message: 'no front matter', line: null, brickId: null },
      ],
    })
    expect(formatPlan('a.md', p)).toBe(
      'a.md: error envelope.missing no front matter\na.md: invalid: 1 error; nothing planned\n',
    )
  })
})

describe('formatInstall', () => {
  const install: Install = {
    id: 'ins_2',
    blueprintId: 'help-desk',
    name: 'Help desk',
    version: '1.2.0',
    status: 'partial',
    resources: [
      {
        brickId: 'tickets',
        brickKind: 'collection',
        verdict: 'CREATE',
        resourceRef: 'hd_tickets',
        status: 'settled',
        error: null,
      },
      {
        brickId: 'r',
        brickKind: 'role',
        verdict: 'CREATE',
        resourceRef: null,
        status: 'failed',
        error: { code: 'already_exists', message: 'taken' },
      },
      {
        brickId: 'g',
        brickKind: 'grants',
        verdict: 'CREATE',
        resourceRef: null,
        status: 'skipped',
        error: 'consent not given',
      },
    ],
  }

  it('its status, then each resource with its outcome', () => {
    expect(formatInstall(install)).toBe(
      [
        'Install ins_2 of Help desk 1.2.0: partial',
        '  settled CREATE collection tickets (hd_tickets)',
        '  failed  CREATE role r: already_exists: taken',
        '  skipped CREATE grants g: consent not given',
        '',
      ].join('\n'),
    )
  })

  it('colours outcomes on a terminal', () => {
    expect(formatInstall({ ...install, resources: [] }, palette(true))).toBe(
      'Install ins_2 of Help desk 1.2.0: \u001b[31mpartial\u001b[39m\n',
    )
  })
})

describe('wantsColour', () => {
  it.each([
    { isTTY: true, env: {}, colour: true },
    { isTTY: true, env: { NO_COLOR: '1' }, colour: false },
    { isTTY: true, env: { NO_COLOR: '' }, colour: true },
    { isTTY: false, env: {}, colour: false },
    { isTTY: undefined, env: {}, colour: false },
  ])('tty $isTTY, env $env → $colour', ({ isTTY, env, colour }) => {
    expect(wantsColour(isTTY, env)).toBe(colour)
  })
})
