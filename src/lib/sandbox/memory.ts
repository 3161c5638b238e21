import releaseSync from '@jitl/quickjs-wasmfile-release-sync'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core'

// The package's types describe its CommonJS build (default under `.default`); its ES module exports the variant itself.
const variant = ((releaseSync as { default?: QuickJSSyncVariant }).default ?? releaseSync) as QuickJSSyncVariant

const pageBytes = 64 * 1024
/** The build's initial memory (INITIAL_MEMORY): its memory import asks for at least this, so no run gets less. */
export const minimumMemoryBytes = 16 * 1024 * 1024
/**
 * Linear memory beyond the script's limit: QuickJS's static data, the WebAssembly stack, the runtime and
 * context (about 5 MiB before a script runs, measured), and what the allocator and the growth steps waste.
 */
export const memoryHeadroomBytes = 8 * 1024 * 1024

/**
 * The most WebAssembly memory a run with this limit may have: the limit plus the headroom, at least the
 * build's 16 MiB. This, not QuickJS's own limit, is what holds: this build cannot ask its allocator for
 * a block's size (malloc_usable_size), so QuickJS counts 8 bytes per allocation and its limit refuses only
 * single allocations larger than itself (decision 047).
 */
export function linearMemoryBytes(limitBytes: number): number {
  return Math.max(minimumMemoryBytes, Math.ceil((limitBytes + memoryHeadroomBytes) / pageBytes) * pageBytes)
}

let compiled: Promise<WebAssembly.Module> | undefined

/** The QuickJS WebAssembly code, compiled once per thread (or handed in compiled, from the thread that started this one). */
export function compiledQuickJS(given?: WebAssembly.Module): Promise<WebAssembly.Module> {
  if (given) compiled ??= Promise.resolve(given)
  compiled ??= readFile(createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm')).then(
    (bytes) => WebAssembly.compile(bytes),
  )
  return compiled
}

/** A fresh QuickJS instance over its own memory; `exhausted()` is true once the memory was refused growth (the script reached its limit). */
export interface SandboxInstance {
  readonly module: QuickJSWASMModule
  readonly memory: WebAssembly.Memory
  exhausted(): boolean
}

/** Instantiates QuickJS with a new WebAssembly memory capped at linearMemoryBytes(limitBytes). */
export async function newSandboxInstance(limitBytes: number): Promise<SandboxInstance> {
  const memory = new WebAssembly.Memory({
    initial: minimumMemoryBytes / pageBytes,
    maximum: linearMemoryBytes(limitBytes) / pageBytes,
  })
  let refused = false
  // Emscripten grows the memory through this method and takes a throw as "no more memory" (malloc returns
  // NULL, QuickJS throws its out-of-memory error); noting it tells a crash of the host side at the limit apart.
  const grow = memory.grow.bind(memory)
  memory.grow = (delta: number) => {
    try {
      return grow(delta)
    } catch (err) {
      refused = true
      throw err
    }
  }
  const wasmModule = await compiledQuickJS()
  const module = await newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmModule, wasmMemory: memory }))
  return { module, memory, exhausted: () => refused }
}
