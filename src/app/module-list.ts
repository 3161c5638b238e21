import type { AppModule } from '../lib/module.js'

/**
 * The modules in the order they are built, as data: each entry a name and how its module is built from the
 * context and the modules built before it. `add` widens the type of what later entries see by exactly one
 * member, so an entry can only reach modules above it, and a changed factory is a type error in its entry.
 */
export interface ModuleList<Context, Built> {
  /** The names in build order. */
  readonly names: readonly string[]
  /** Appends a module, built from the context and every module above it. */
  add<Name extends string, M extends AppModule>(
    name: Name extends keyof Built ? never : Name,
    build: (context: Context, built: Built) => M | Promise<M>,
  ): ModuleList<Context, Built & { readonly [K in Name]: M }>
  /** Builds every module in order; `onBuilt` hears of each as soon as it exists (routers, closing in reverse). */
  compose(context: Context, onBuilt: (module: AppModule) => void): Promise<Built>
}

/** An empty module list over the given context. */
export function moduleList<Context>(): ModuleList<Context, object> {
  return listOf<Context, object>([], async () => ({}))
}

function listOf<Context, Built>(
  names: readonly string[],
  compose: (context: Context, onBuilt: (module: AppModule) => void) => Promise<Built>,
): ModuleList<Context, Built> {
  return {
    names,
    add: <Name extends string, M extends AppModule>(
      name: Name extends keyof Built ? never : Name,
      build: (context: Context, built: Built) => M | Promise<M>,
    ) =>
      listOf<Context, Built & { readonly [K in Name]: M }>([...names, name], async (context, onBuilt) => {
        const built = await compose(context, onBuilt)
        const module = await build(context, built)
        onBuilt(module)
        // TypeScript widens a computed key of a generic type to a string index; the key is exactly `name`.
        const added = { [name]: module } as { readonly [K in Name]: M }
        return { ...built, ...added }
      }),
    compose,
  }
}
