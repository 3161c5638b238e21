import { anonymousContext, filterContext, type FilterCase } from './filter-fixture.js'

/** Variables ($CURRENT_USER, $CURRENT_ROLE, $PROJECT_ID, $NOW, $NOW_DATE), signed in and anonymous. */
export const variableCases: readonly FilterCase[] = [
  // Variables
  { name: '$CURRENT_USER shorthand', filter: { owner: '$CURRENT_USER' }, matches: ['r1', 'r4'] },
  {
    name: '$CURRENT_USER (array)',
    filter: [{ field: 'owner', op: 'eq', value: '$CURRENT_USER' }],
    matches: ['r1', 'r4'],
  },
  { name: '$CURRENT_USER _neq', filter: { owner: { _neq: '$CURRENT_USER' } }, matches: ['r2', 'r5', 'r6'] },
  { name: '$CURRENT_ROLE', filter: { audience: { _eq: '$CURRENT_ROLE' } }, matches: ['r1', 'r4'] },
  { name: '$PROJECT_ID', filter: { project: '$PROJECT_ID' }, matches: ['r1', 'r3', 'r4', 'r5', 'r6'] },
  { name: '$NOW _lt', filter: { created_at: { _lt: '$NOW' } }, matches: ['r1', 'r4'] },
  {
    name: '$NOW lte (array)',
    filter: [{ field: 'created_at', op: 'lte', value: '$NOW' }],
    matches: ['r1', 'r4', 'r5'],
  },
  { name: '$NOW_DATE', filter: { day: '$NOW_DATE' }, matches: ['r1', 'r5'] },
  { name: 'variable in an _in list', filter: { owner: { _in: ['$CURRENT_USER', 'u3'] } }, matches: ['r1', 'r4', 'r5'] },
  {
    name: 'variable in a comma-separated list (array)',
    filter: [{ field: 'owner', op: 'in', value: 'u3,$CURRENT_USER' }],
    matches: ['r1', 'r4', 'r5'],
  },
  {
    name: 'variable as a between bound (array)',
    filter: [{ field: 'created_at', op: 'between', value: 1_699_000_000, valueTo: '$NOW' }],
    matches: ['r1', 'r5'],
  },
  {
    name: 'a later $NOW',
    filter: { created_at: { _gte: '$NOW' } },
    context: { ...filterContext, now: 1_700_000_500 },
    matches: ['r2', 'r3'],
  },
  {
    name: 'anonymous: $CURRENT_USER matches nothing',
    filter: { owner: '$CURRENT_USER' },
    context: anonymousContext,
    matches: [],
  },
  {
    name: 'anonymous: _neq $CURRENT_USER matches nothing',
    filter: { owner: { _neq: '$CURRENT_USER' } },
    context: anonymousContext,
    matches: [],
  },
  {
    name: 'anonymous: _nin [$CURRENT_USER] matches nothing',
    filter: { owner: { _nin: ['$CURRENT_USER'] } },
    context: anonymousContext,
    matches: [],
  },
  {
    name: 'anonymous: grant scope OR public rows',
    filter: { _or: [{ owner: { _eq: '$CURRENT_USER' } }, { status: 'published' }] },
    context: anonymousContext,
    matches: ['r1', 'r5', 'r6'],
  },
  { name: 'a lower-case $name is a literal', filter: { owner: '$current_user' }, matches: [] },
]
