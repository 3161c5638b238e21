/**
 * Inputs the parser must refuse with invalid_request, shared so that the HTTP layer can replay them
 * (string inputs are meant to arrive verbatim as the filter query parameter).
 * `path`, when given, is the location the error must name.
 */
export interface HostileFilter {
  readonly name: string
  readonly input: unknown
  readonly path?: string
}

/** `levels` of `_and`/`_or` around `{ age: 1 }`: alternating (mixed), or one combinator throughout. */
export const nestedFilter = (levels: number, combinator: '_and' | '_or' | 'mixed' = 'mixed'): unknown => {
  let filter: unknown = { age: 1 }
  for (let i = 0; i < levels; i += 1)
    filter = { [combinator === 'mixed' ? (i % 2 === 0 ? '_and' : '_or') : combinator]: [filter] }
  return filter
}
/** The same as JSON text, written without JSON.stringify (which recurses). */
export const nestedFilterJson = (levels: number, combinator: '_and' | '_or' = '_and'): string =>
  `${`{"${combinator}":[`.repeat(levels)}{"age":1}${']}'.repeat(levels)}`
const nested = (levels: number): unknown => nestedFilter(levels)
const deepArray = (levels: number): unknown => {
  let value: unknown = 1
  for (let i = 0; i < levels; i += 1) value = [value]
  return value
}
const manyKeys = (count: number): Record<string, number> =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}`, i]))
const manyConditions = (count: number): unknown[] =>
  Array.from({ length: count }, (_, i) => ({ field: `f${i}`, op: 'eq', value: i }))
const ownProto = (value: unknown): Record<string, unknown> => {
  const target: Record<string, unknown> = {}
  Object.defineProperty(target, '__proto__', { value, enumerable: true, configurable: true, writable: true })
  return target
}
class Filter {
  age = 1
}

export const hostileFilters: readonly HostileFilter[] = [
  // SQL injection and tricks in field names
  { name: 'statement in a field name', input: { 'name; drop table x': 1 }, path: 'filter["name; drop table x"]' },
  { name: 'boolean injection in a field name', input: { 'a) or 1=1--': 1 } },
  { name: 'single quote in a field name', input: { "name'": 1 } },
  { name: 'double quote in a field name', input: { 'name"': 1 } },
  { name: 'backticks in a field name', input: { '`name`': 1 } },
  { name: 'bracket-quoted field name', input: { '[name]': 1 } },
  { name: 'comment in a field name', input: { 'name--': 1 } },
  { name: 'block comment in a field name', input: { 'name/**/': 1 } },
  { name: 'space in a field name', input: { 'first name': 1 } },
  { name: 'JSON path syntax in a field name', input: { "meta->>'size'": 1 } },
  { name: 'dollar path in a field name', input: { '$.meta': 1 } },
  { name: 'field name starting with a digit', input: { '1name': 1 } },
  { name: 'empty field name', input: { '': 1 } },
  { name: 'lone dot', input: { '.': 1 } },
  { name: 'leading dot', input: { '.meta': 1 } },
  { name: 'trailing dot', input: { 'meta.': 1 } },
  { name: 'double dot', input: { 'meta..size': 1 } },
  { name: 'injection after a dot', input: { 'meta.size;drop': 1 } },
  { name: 'segment of 65 characters', input: { ['a'.repeat(65)]: 1 } },
  { name: 'nine segments', input: { 'a.b.c.d.e.f.g.h.i': 1 } },
  { name: 'Cyrillic a in a field name', input: { 'n\u0430me': 1 } },
  { name: 'Kelvin sign in a field name', input: { '\u212aey': 1 } },
  { name: 'long s in a field name', input: { '\u017ftatus': 1 } },
  { name: 'fullwidth field name', input: { '\uff4e\uff41\uff4d\uff45': 1 } },
  { name: 'zero-width space in a field name', input: { 'name\u200b': 1 } },
  { name: 'NUL in a field name', input: { 'name\u0000': 1 } },
  { name: 'newline in a field name', input: { 'na\nme': 1 } },
  { name: 'accented field name', input: { 'caf\u00e9': 1 } },
  {
    name: 'injection in an array field',
    input: [{ field: 'name; drop table x', op: 'eq', value: 1 }],
    path: 'filter[0].field',
  },
  { name: 'quote in an array field', input: [{ field: "a' OR '1'='1", op: 'eq', value: 1 }] },
  { name: 'injection in a field under _or', input: { _or: [{ age: 1 }, { 'a) or 1=1--': 1 }] } },

  // Unknown operators and ops
  { name: 'unknown operator', input: { _or: [{ age: 1 }, { age: { _like: 'x' } }] }, path: 'filter._or[1].age' },
  { name: '_regex', input: { name: { _regex: '.*' } } },
  { name: 'upper-case operator', input: { name: { _EQ: 'x' } } },
  { name: 'operator without underscore', input: { name: { eq: 'x' } } },
  { name: 'operator with a trailing space', input: { name: { '_eq ': 'x' } } },
  { name: 'injection in an operator', input: { name: { '_eq; drop table x': 'x' } } },
  { name: 'dollar operator', input: { name: { $eq: 'x' } } },
  { name: '_between in the object format', input: { age: { _between: [1, 2] } } },
  { name: '_empty in the object format', input: { name: { _empty: true } } },
  { name: 'constructor as an operator', input: { name: { constructor: 1 } } },
  { name: 'toString as an operator', input: { name: { toString: 1 } } },
  { name: 'hasOwnProperty as an operator', input: { name: { hasOwnProperty: 1 } } },
  { name: 'nested field object', input: { meta: { size: 1 } } },
  { name: '_not combinator', input: { _not: [{ age: 1 }] } },
  { name: '_not with an object', input: { _not: { age: 1 } } },
  { name: 'unknown op (array)', input: [{ field: 'name', op: 'like', value: 'x' }], path: 'filter[0].op' },
  { name: 'nin is not an array-format op', input: [{ field: 'name', op: 'nin', value: 'x' }] },
  { name: 'is_null is not an array-format op', input: [{ field: 'name', op: 'is_null' }] },
  { name: 'upper-case op (array)', input: [{ field: 'name', op: 'EQ', value: 'x' }] },
  { name: 'object-format op in the array format', input: [{ field: 'name', op: '_eq', value: 'x' }] },
  { name: 'constructor as an op (array)', input: [{ field: 'name', op: 'constructor', value: 'x' }] },
  { name: 'toString as an op (array)', input: [{ field: 'name', op: 'toString', value: 'x' }] },
  { name: 'op is not a string (array)', input: [{ field: 'name', op: 1, value: 'x' }] },
  { name: 'missing op (array)', input: [{ field: 'name', value: 'x' }] },
  { name: 'missing field (array)', input: [{ op: 'eq', value: 'x' }] },
  { name: 'field is not a string (array)', input: [{ field: 1, op: 'eq', value: 'x' }] },
  {
    name: 'unknown key (array)',
    input: [{ field: 'name', op: 'eq', value: 'x', where: '1=1' }],
    path: 'filter[0].where',
  },
  { name: 'valueTo outside between (array)', input: [{ field: 'age', op: 'eq', value: 1, valueTo: 2 }] },

  // Wrong value types
  { name: 'array as a shorthand value', input: { age: [1, 2] } },
  { name: 'array for _eq', input: { age: { _eq: [1] } } },
  { name: 'object for _gt', input: { age: { _gt: { x: 1 } } } },
  { name: 'empty operator object', input: { age: {} } },
  { name: 'scalar for _in', input: { age: { _in: 5 } } },
  { name: 'comma string for _in', input: { age: { _in: '1,2' } } },
  { name: 'empty _in', input: { age: { _in: [] } } },
  { name: 'nested array in _in', input: { age: { _in: [[1]] } } },
  { name: 'object in _nin', input: { age: { _nin: [{}] } } },
  { name: 'sparse _in', input: { age: { _in: [1, , 2] } } }, // eslint-disable-line no-sparse-arrays
  { name: '_in of 501 values', input: { age: { _in: Array.from({ length: 501 }, (_, i) => i) } } },
  { name: '_null: false', input: { age: { _null: false } } },
  { name: '_null: "true"', input: { age: { _null: 'true' } } },
  { name: '_nnull: 1', input: { age: { _nnull: 1 } } },
  { name: '_nnull: null', input: { age: { _nnull: null } } },
  { name: '_and as an object', input: { _and: { age: 1 } } },
  { name: '_or as a string', input: { _or: 'age=1' } },
  { name: 'empty _and', input: { _and: [] } },
  { name: 'empty _or', input: { _or: [] } },
  { name: 'number in _and', input: { _and: [1] } },
  { name: 'array in _or', input: { _or: [[{ age: 1 }]] }, path: 'filter._or[0]' },
  { name: 'empty object in _and', input: { _and: [{}] } },
  { name: 'null in _or', input: { _or: [null] } },
  { name: 'array value (array)', input: [{ field: 'age', op: 'eq', value: [1] }] },
  { name: 'object value (array)', input: [{ field: 'age', op: 'gt', value: { $gt: 1 } }] },
  { name: 'missing value (array)', input: [{ field: 'age', op: 'eq' }], path: 'filter[0].value' },
  { name: 'between without valueTo (array)', input: [{ field: 'age', op: 'between', value: 1 }] },
  { name: 'between with an array (array)', input: [{ field: 'age', op: 'between', value: [1, 2] }] },
  { name: 'in with a number (array)', input: [{ field: 'age', op: 'in', value: 5 }] },
  { name: 'in with an empty string (array)', input: [{ field: 'age', op: 'in', value: '' }] },
  {
    name: 'in with 501 values (array)',
    input: [{ field: 'age', op: 'in', value: Array.from({ length: 501 }, () => '1').join(',') }],
  },
  { name: 'empty with a value (array)', input: [{ field: 'note', op: 'empty', value: 'x' }] },
  { name: 'arrays where objects belong (array)', input: [[{ field: 'age', op: 'eq', value: 1 }]] },
  { name: 'number element (array)', input: [1] },
  { name: 'null element (array)', input: [null] },
  { name: 'string element (array)', input: ['age=1'] },
  { name: 'object-format element (array)', input: [{ age: 1 }] },

  // Unknown variables
  { name: 'misspelt variable', input: { owner: '$CURRENT_USR' } },
  { name: 'unknown variable', input: { owner: { _eq: '$ADMIN' } } },
  { name: 'unknown variable in a list', input: { owner: { _in: ['u1', '$EVERYONE'] } } },
  { name: 'unknown variable in a comma list (array)', input: [{ field: 'owner', op: 'in', value: 'u1,$EVERYONE' }] },

  // Size and depth
  { name: 'depth 9', input: nested(9) },
  { name: 'depth 50', input: nested(50) },
  { name: 'depth 50 as JSON', input: JSON.stringify(nested(50)) },
  { name: 'depth 5,000 of _and', input: nestedFilter(5_000, '_and'), path: `filter${'._and[0]'.repeat(8)}._and` },
  { name: 'depth 50,000 of _or', input: nestedFilter(50_000, '_or') },
  { name: 'depth 50,000 mixed', input: nestedFilter(50_000) },
  { name: 'depth 5,000 as JSON', input: nestedFilterJson(5_000) },
  { name: 'arrays nested 50,000 deep under an operator', input: { age: { _in: deepArray(50_000) } } },
  { name: 'arrays nested 50,000 deep (array)', input: deepArray(50_000) },
  { name: 'objects nested 50,000 deep under a field', input: { meta: nestedFilter(50_000, '_and') } },
  { name: 'key over 4096 characters', input: { ['a'.repeat(4097)]: 1 } },
  { name: '600 values in one array', input: [Array.from({ length: 600 }, () => 1)] },
  {
    name: 'object over 16 KiB given as a value',
    input: { _or: Array.from({ length: 100 }, (_, i) => ({ [`f${i}`]: 'x'.repeat(200) })) },
  },
  { name: '101 conditions', input: manyKeys(101) },
  { name: '10,000 conditions in one object', input: manyKeys(10_000) },
  { name: '10,000 conditions (array)', input: manyConditions(10_000) },
  { name: '10,000 items in _and', input: { _and: Array.from({ length: 10_000 }, () => ({ age: 1 })) } },
  {
    name: '101 operators over _or branches',
    input: { _or: Array.from({ length: 51 }, () => ({ age: { _gt: 1, _lt: 9 } })) },
  },
  { name: 'JSON over 16 KiB', input: JSON.stringify({ name: 'x'.repeat(16_384) }) },
  { name: 'JSON over 16 KiB in multibyte characters', input: JSON.stringify({ name: '\u20ac'.repeat(6_000) }) },
  { name: 'one megabyte of JSON', input: `{"name":"${'x'.repeat(1 << 20)}"}` },
  { name: 'string value over 4096 characters', input: { name: 'x'.repeat(4097) } },
  { name: 'comma list over 4096 characters (array)', input: [{ field: 'name', op: 'in', value: 'x'.repeat(4097) }] },

  // Prototype pollution
  { name: '__proto__ key from JSON', input: '{"__proto__":{"polluted":true}}', path: 'filter.__proto__' },
  { name: '__proto__ own key', input: ownProto({ polluted: true }) },
  { name: 'object literal with a __proto__ prototype', input: { __proto__: { age: 1 } } },
  { name: 'constructor key', input: { constructor: { _eq: 1 } } },
  { name: 'prototype key', input: { prototype: 1 } },
  { name: '__proto__ as an operator', input: '{"age":{"__proto__":1}}' },
  { name: '__proto__ under _and', input: '{"_and":[{"__proto__":{"age":1}}]}' },
  { name: '__proto__ inside a dotted path', input: { 'meta.__proto__.x': 1 } },
  { name: 'constructor inside a dotted path', input: { 'meta.constructor': 1 } },
  { name: '__proto__ field (array)', input: [{ field: '__proto__', op: 'eq', value: 1 }] },
  { name: '__proto__ key in a condition (array)', input: '[{"field":"age","op":"eq","value":1,"__proto__":{}}]' },

  // Not JSON, or JSON of the wrong shape
  { name: 'not JSON', input: 'age=1' },
  { name: 'empty string', input: '' },
  { name: 'blank string', input: '   ' },
  { name: 'JSON5 keys', input: '{age:1}' },
  { name: 'single-quoted JSON', input: "{'age':1}" },
  { name: 'truncated JSON', input: '[{"field":"age"' },
  { name: 'trailing garbage', input: '{"age":1} OR 1=1' },
  { name: 'two documents', input: '{}{}' },
  { name: 'JSON number', input: '42' },
  { name: 'JSON string', input: '"{\\"age\\":1}"' },
  { name: 'JSON null', input: 'null' },
  { name: 'JSON true', input: 'true' },
  { name: 'number', input: 42 },
  { name: 'null', input: null },
  { name: 'undefined', input: undefined },
  { name: 'boolean', input: true },
  { name: 'function', input: () => ({ age: 1 }) },
  { name: 'class instance', input: new Filter() },
  { name: 'Map', input: new Map([['age', 1]]) },
  { name: 'Date', input: new Date(0) },
  { name: 'symbol key', input: { [Symbol('age')]: 1 } },
  { name: 'symbol key beside a field', input: { age: 1, [Symbol('x')]: 1 } },

  // Non-finite numbers and other non-JSON values
  { name: '1e999 parses to Infinity', input: '{"age":1e999}' },
  { name: '-1e999 parses to -Infinity', input: '{"age":{"_gt":-1e999}}' },
  { name: '1e999 in a list', input: '{"age":{"_in":[1,1e999]}}' },
  { name: '1e999 as a between bound (array)', input: '[{"field":"age","op":"between","value":1,"valueTo":1e999}]' },
  { name: 'NaN literal in JSON', input: '{"age":NaN}' },
  { name: 'Infinity literal in JSON', input: '{"age":Infinity}' },
  { name: 'NaN value', input: { age: Number.NaN } },
  { name: 'Infinity value', input: { age: { _lt: Number.POSITIVE_INFINITY } } },
  { name: 'NaN in a list', input: { age: { _in: [1, Number.NaN] } } },
  { name: 'undefined value', input: { age: undefined } },
  { name: 'bigint value', input: { age: 1n } },
  { name: 'function value', input: { age: () => 1 } },
  { name: 'symbol value', input: { age: Symbol('x') } },
  { name: 'Date value', input: { created_at: { _gt: new Date(0) } } },
]
