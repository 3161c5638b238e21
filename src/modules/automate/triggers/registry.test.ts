import { describe, expect, it } from 'vitest'
import { triggerDefinitions, triggerTypes } from './registry.js'

describe('trigger registry', () => {
  it('has one definition per trigger type of the spec, in its order, each with its config schema', () => {
    expect(triggerDefinitions.map((t) => t.type)).toEqual([...triggerTypes])
    expect(triggerTypes).toEqual([
      'event_action',
      'event_filter',
      'webhook',
      'schedule',
      'manual',
      'api_endpoint',
      'another_flow',
      'app_event',
    ])
  })

  it('marks what the spec calls blocking: event_filter yes, another_flow as its parent, the rest no', () => {
    const blocking = Object.fromEntries(triggerDefinitions.map((t) => [t.type, t.blocking]))
    expect(blocking).toEqual({
      event_action: false,
      event_filter: true,
      webhook: false,
      schedule: false,
      manual: false,
      api_endpoint: false,
      another_flow: 'parent',
      app_event: false,
    })
  })
})
