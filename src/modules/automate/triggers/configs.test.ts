import { describe, expect, it } from 'vitest'
import { scheduleConfig } from './schedule.js'
import { webhookConfig } from './webhook.js'

describe('trigger configs', () => {
  it.each([
    ['203.0.113.7', true],
    ['203.0.113.0/24', true],
    ['2001:db8::/32', true],
    ['::1', true],
    ['10.0.0.0/33', false],
    ['not-an-ip', false],
    ['203.0.113', false],
  ])('webhook ip_allowlist entry %s valid: %s', (entry, valid) => {
    expect(webhookConfig.safeParse({ ip_allowlist: [entry] }).success).toBe(valid)
  })

  it('fills webhook defaults: POST only, no auth, any address', () => {
    expect(webhookConfig.parse({})).toEqual({
      allowed_methods: ['POST'],
      require_auth: false,
      ip_allowlist: [],
    })
  })

  it('saves a schedule draft with any zone (the flows service checks cron and zone on activation)', () => {
    expect(scheduleConfig.safeParse({ cron: '0 9 * * *', timezone: 'Mars/Olympus' }).success).toBe(true)
    expect(scheduleConfig.parse({ cron: '0 9 * * *' })).toEqual({ cron: '0 9 * * *', timezone: 'UTC' })
  })
})
