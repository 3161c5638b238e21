import { defineBrickKind } from './define.js'
import { holdsLateBound, isLateBound } from './refs.js'

/**
 * A lens attachment addresses its lens by its lensId. A late-bound reference to a lens brick cannot be
 * resolved at plan time, so the plan blocks the brick (`brick.late_bound_lens`).
 */
export const attachmentKind = defineBrickKind({
  kind: 'attachment',
  label: 'a lens attachment',
  namedBy: null,
  staticCheck(body, ctx) {
    const lensId = body.lensId
    if (isLateBound(lensId) || (lensId === undefined && holdsLateBound(body))) {
      ctx.blocked('brick.late_bound_lens', 'the lens is a late-bound reference: address it by its lensId')
    } else if (typeof lensId !== 'string' || lensId === '') {
      ctx.error('brick.invalid_body', 'an attachment brick addresses its lens by lensId')
    }
  },
})
