import { defineBrickKind } from './define.js'

/**
 * A collection brick states its access preset explicitly, and it is `private`: access is granted by the
 * document's access and grants bricks, never opened by a preset. The spec's spelling is `accessPreset`;
 * the create route's own spelling, `accessControl.preset`, counts as a statement too (decision 068).
 */
export const collectionKind = defineBrickKind({
  kind: 'collection',
  label: 'a collection',
  namedBy: 'name',
  staticCheck(body, ctx) {
    const stated: unknown[] = []
    if (Object.hasOwn(body, 'accessPreset')) stated.push(body.accessPreset)
    const control = body.accessControl
    if (control !== null && typeof control === 'object' && Object.hasOwn(control, 'preset'))
      stated.push((control as Record<string, unknown>).preset)
    if (stated.length === 0) {
      ctx.error('access.preset_required', 'a collection brick must state accessPreset: private')
      return
    }
    const other = stated.find((preset) => preset !== 'private')
    if (other !== undefined)
      ctx.error(
        'access.preset_not_private',
        `a collection brick's accessPreset must be private, not ${JSON.stringify(other)}`,
      )
  },
})
