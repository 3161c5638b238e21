import { defineBrickKind } from './define.js'

/** Navigation bricks add top-level items of the shared tree only: a parentId or a scope is refused. */
export const navKind = defineBrickKind({
  kind: 'nav',
  label: 'a navigation item',
  namedBy: 'label',
  staticCheck(body, ctx) {
    if (Object.hasOwn(body, 'parentId') && body.parentId !== null)
      ctx.error('brick.nav_not_top_level', 'a nav brick adds a top-level item: parentId is refused')
    if (Object.hasOwn(body, 'scope'))
      ctx.error('brick.nav_not_top_level', 'a nav brick adds to the shared tree: scope is refused')
  },
})
