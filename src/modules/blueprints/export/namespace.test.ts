import { describe, expect, it } from 'vitest'
import { namespacer } from './namespace.js'

describe('namespacer', () => {
  const ns = namespacer('desk', ['desk_tickets', 'desk-agent', 'other_things'])

  it('finds the namespace as a word of a name, never inside another word', () => {
    for (const name of ['desk_tickets', 'desk-agent', 'desk tickets', 'Open desk'])
      expect(ns.holds(name), name).toBe(true)
    for (const name of ['desktop', 'mydesk_x', 'my_desk_x', 'tickets']) expect(ns.holds(name), name).toBe(false)
  })

  it('templates a resource’s own name as a word, anything else only where a whole namespaced name stands', () => {
    expect(ns.name('desk tickets')).toBe('${params.prefix} tickets')
    expect(ns.name('desk_open')).toBe('${params.prefix}_open')
    expect(ns.text('collections/desk_tickets')).toBe('collections/${params.prefix}_tickets')
    expect(ns.text('desk-agent')).toBe('${params.prefix}-agent')
    // A column that is not a resource, a longer name, and a name outside the namespace stay as written.
    expect(ns.text('{{desk_total}} of desk_tickets_archive')).toBe('{{desk_total}} of desk_tickets_archive')
    expect(ns.text('other_things')).toBe('other_things')
  })

  it('writes each placeholder once, even for a namespace spelled like the placeholder', () => {
    const odd = namespacer('params', ['params_x'])
    expect(odd.name('params_x')).toBe('${params.prefix}_x')
    expect(odd.text('params_x and params_x')).toBe('${params.prefix}_x and ${params.prefix}_x')
  })
})
