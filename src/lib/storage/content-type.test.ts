import { describe, expect, it } from 'vitest'
import { checkContentType, sameContentType } from './content-type.js'

describe('checkContentType', () => {
  it.each([
    'image/png',
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    'text/plain; charset=utf-8',
    'multipart/form-data; boundary="a b"',
    ' text/csv ',
  ])('accepts %j', (type) => {
    expect(checkContentType(type)).toBe(type.trim())
  })

  it.each([
    '',
    'png',
    'text/',
    '/plain',
    'text/plain\r\nX-Evil: 1',
    'text/plain; charset',
    'a b/c',
    'x/'.padEnd(300, 'y'),
    7,
  ])('refuses %j', (type) => {
    expect(() => checkContentType(type)).toThrow(expect.objectContaining({ code: 'invalid_request' }))
  })
})

describe('sameContentType', () => {
  it.each([
    ['image/png', 'image/png', true],
    ['image/png', 'IMAGE/PNG', true],
    ['text/plain; charset=utf-8', 'text/plain;charset=UTF-8', true],
    ['text/plain', 'text/plain; charset=utf-8', false],
    ['image/png', 'image/jpeg', false],
  ])('%j and %j: %s', (a, b, same) => {
    expect(sameContentType(a, b)).toBe(same)
  })
})
