import { describe, expect, it } from 'vitest'
import { byteRange, sandboxed } from './serve.js'

describe('byteRange', () => {
  it.each([
    [undefined, 10, null],
    ['bytes=0-4', 10, { start: 0, end: 4 }],
    ['bytes=4-', 10, { start: 4, end: 9 }],
    ['bytes=-3', 10, { start: 7, end: 9 }],
    ['bytes=-30', 10, { start: 0, end: 9 }],
    ['bytes=5-100', 10, { start: 5, end: 9 }],
    ['bytes=9-9', 10, { start: 9, end: 9 }],
    ['bytes=10-', 10, null],
    ['bytes=5-4', 10, null],
    ['bytes=-0', 10, null],
    ['bytes=-', 10, null],
    ['bytes=0-1,3-4', 10, null],
    ['items=0-4', 10, null],
    ['bytes=0-4', 0, null],
  ])('%j of %i bytes → %j', (header, size, range) => {
    expect(byteRange(header, size)).toEqual(range)
  })
})

describe('sandboxed', () => {
  it.each([
    ['text/html', true],
    ['image/svg+xml', true],
    ['application/xhtml+xml', true],
    ['text/xml', true],
    ['application/javascript', true],
    ['image/png', false],
    ['IMAGE/JPEG', false],
    ['video/mp4', false],
    ['audio/mpeg', false],
    ['application/pdf', false],
    ['text/plain; charset=utf-8', false],
    ['application/octet-stream', false],
  ])('%s → %s', (type, sandbox) => {
    expect(sandboxed(type)).toBe(sandbox)
  })
})
