import type { Logger } from '../lib/log.js'
import type { AppModule } from '../lib/module.js'
import { closeAll, type Platform } from '../platform.js'

/** Closes the modules built so far, the last built first; a failure is logged and the rest still close. */
export function closeModules(modules: readonly AppModule[], log: Logger): Promise<void> {
  return closeAll(
    modules.toReversed().flatMap((m) => (m.close ? [m.close] : [])),
    log,
  )
}

/** Closes a running app: the queue, the modules in reverse order, then the platform. */
export function closeApp(platform: Platform, modules: readonly AppModule[], log: Logger): Promise<void> {
  // A running job may use any module, so the queue stops (waiting for its jobs) before anything else closes.
  return closeAll([() => platform.queue.close(), () => closeModules(modules, log), () => platform.close()], log)
}
