import type { AppOptions } from '../../src/app.js'

type Kind = Parameters<NonNullable<AppOptions['credentialLoadPace']>>[0]

export interface HeldLoad {
  /** Resolves once the load has done its database reads and is waiting to be cached. */
  readonly reached: Promise<void>
  /** Lets the load go on (to be cached, unless an invalidation landed meanwhile). */
  release(): void
}

/**
 * Holds one credential load at the app's `credentialLoadPace` point, after its database reads and before
 * it is cached, so a test can land a sign-out or revocation exactly there instead of trying many times.
 * Pass `pace` as the app option; `hold(kind)` catches the next load of that kind only, others run on.
 */
export function createLoadGate(): { pace: NonNullable<AppOptions['credentialLoadPace']>; hold(kind: Kind): HeldLoad } {
  let armed: { kind: Kind; reach: () => void; released: Promise<void> } | null = null
  return {
    async pace(kind) {
      const gate = armed
      if (!gate || gate.kind !== kind) return
      armed = null
      gate.reach()
      await gate.released
    },
    hold(kind) {
      if (armed) throw new Error('A load is already being held')
      let reach!: () => void
      let release!: () => void
      const reached = new Promise<void>((resolve) => (reach = resolve))
      const released = new Promise<void>((resolve) => (release = resolve))
      armed = { kind, reach, released }
      return { reached, release }
    },
  }
}
