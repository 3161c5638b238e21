// The analysis of a Chromium performance trace for the admin UI benchmark (admin-ui.ts): the page's main
// thread, task by task, with the script time in each (CPU and wall).

export interface TraceEvent {
  name: string
  ph: string
  pid: number
  tid: number
  ts: number
  dur?: number
  tdur?: number
  args?: { name?: string }
}

const scriptEvents = new Set([
  'FunctionCall',
  'EventDispatch',
  'FireAnimationFrame',
  'TimerFire',
  'EvaluateScript',
  'v8.run',
  'RunMicrotasks',
  'V8.Execute',
  'v8.callFunction',
])

/**
 * The renderer's main-thread tasks in a trace: each task's wall and thread (CPU) time, and the script it ran
 * (the outermost script events inside it, so nested calls are not counted twice).
 */
export function tasksOf(events: TraceEvent[]) {
  const mains = events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain')
  // The page's renderer: the main thread with the most script.
  const busiest = mains
    .map((m) => ({ m, n: events.filter((e) => e.pid === m.pid && e.tid === m.tid && scriptEvents.has(e.name)).length }))
    .sort((a, b) => b.n - a.n)[0]
  if (!busiest) return { tasks: 0, worstTaskCpu: 0, worstTaskWall: 0, worstScriptCpu: 0, worstScriptWall: 0, over50: 0 }
  const own = events
    .filter((e) => e.pid === busiest.m.pid && e.tid === busiest.m.tid && e.ph === 'X' && e.dur !== undefined)
    .sort((a, b) => a.ts - b.ts || (b.dur ?? 0) - (a.dur ?? 0))
  let tasks = 0
  let worstTaskCpu = 0
  let worstTaskWall = 0
  let worstScriptCpu = 0
  let worstScriptWall = 0
  let over50 = 0
  let taskEnd = -1
  let scriptEnd = -1
  let scriptCpu = 0
  let scriptWall = 0
  const close = () => {
    worstScriptCpu = Math.max(worstScriptCpu, scriptCpu)
    worstScriptWall = Math.max(worstScriptWall, scriptWall)
    if (scriptCpu > 50) over50++
    scriptCpu = 0
    scriptWall = 0
  }
  for (const e of own) {
    const end = e.ts + (e.dur ?? 0)
    if (e.name === 'RunTask' && e.ts >= taskEnd) {
      if (tasks > 0) close()
      tasks++
      taskEnd = end
      worstTaskCpu = Math.max(worstTaskCpu, (e.tdur ?? e.dur ?? 0) / 1000)
      worstTaskWall = Math.max(worstTaskWall, (e.dur ?? 0) / 1000)
    } else if (scriptEvents.has(e.name) && e.ts >= scriptEnd) {
      scriptEnd = end
      scriptCpu += (e.tdur ?? e.dur ?? 0) / 1000
      scriptWall += (e.dur ?? 0) / 1000
    }
  }
  close()
  return { tasks, worstTaskCpu, worstTaskWall, worstScriptCpu, worstScriptWall, over50 }
}

export interface Frame {
  duration: number
  blocking: number
  script: number
  scripts: { invoker: string; fn: string; at: number; duration: number; layout: number }[]
}
