import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { RuleTester } from 'eslint'
import tseslint from 'typescript-eslint'
import { afterAll, describe, it } from 'vitest'
import { layersPlugin } from './layers.js'

RuleTester.describe = describe
RuleTester.it = it
RuleTester.itOnly = it.only

const src = (p: string) => resolve(import.meta.dirname, '../../src', p)
const tester = new RuleTester({ languageOptions: { ecmaVersion: 2022, sourceType: 'module' } })

tester.run('one-way-imports', layersPlugin.rules['one-way-imports'] as never, {
  valid: [
    { filename: src('lib/db/registry.ts'), code: "import { x } from '../errors.js'" },
    { filename: src('lib/db/registry.ts'), code: "import { x } from '../http/index.js'" },
    { filename: src('modules/records/service.ts'), code: "import { x } from '../../lib/db/index.js'" },
    { filename: src('modules/records/service.ts'), code: "import { x } from './store.js'" },
    { filename: src('modules/records/service.ts'), code: "import { x } from '../access/index.js'" },
    { filename: src('http/create-http-app.ts'), code: "import { x } from '../modules/system/index.js'" },
    { filename: src('app.ts'), code: "import { x } from './modules/projects/store.js'" },
    { filename: src('migrations/system/index.ts'), code: "import { x } from './0001-projects.js'" },
  ],
  invalid: [
    { filename: src('lib/db/registry.ts'), code: "import { x } from '../../modules/projects/index.js'", errors: 1 },
    { filename: src('lib/log.ts'), code: "import { x } from '../http/errors.js'", errors: 1 },
    { filename: src('lib/log.ts'), code: "import { x } from '../config.js'", errors: 1 },
    { filename: src('modules/records/routes.ts'), code: "import { x } from '../../http/errors.js'", errors: 1 },
    { filename: src('modules/records/routes.ts'), code: "import { x } from '../../app.js'", errors: 1 },
    { filename: src('modules/records/service.ts'), code: "import { x } from '../access/store.js'", errors: 1 },
    { filename: src('modules/records/service.ts'), code: "export { x } from '../access/service.js'", errors: 1 },
    {
      filename: src('migrations/system/0009-x.ts'),
      code: "import { x } from '../../modules/projects/index.js'",
      errors: 1,
    },
  ],
})

// Type-only imports close loops too, so these cases are parsed as the tree is linted.
const tsTester = new RuleTester({ languageOptions: { parser: tseslint.parser, sourceType: 'module' } })

// Import loops, on the real tree: records imports access, so access importing records closes a loop; access
// records through audit, which takes its read check passed in (the loop issue 27 broke stays broken).
tsTester.run('one-way-imports: loops in the real tree', layersPlugin.rules['one-way-imports'] as never, {
  valid: [
    { filename: src('modules/access/service.ts'), code: "import type { AuditService } from '../audit/index.js'" },
    { filename: src('modules/records/service.ts'), code: "import type { AccessService } from '../access/index.js'" },
  ],
  invalid: [
    {
      filename: src('modules/access/service.ts'),
      code: "import type { RecordsService } from '../records/index.js'",
      errors: [{ message: /^import loop access → records → access: modules\/records\/\S+ imports "access"/ }],
    },
    {
      filename: src('modules/audit/service.ts'),
      code: "import type { AccessService } from '../access/index.js'",
      errors: [{ message: /^import loop audit → access → audit: modules\/access\/\S+ imports "audit"/ }],
    },
  ],
})

// Import loops on a tree of three modules: c → b → a, each through the other's index.ts.
const fixture = mkdtempSync(join(tmpdir(), 'plinth-layers-'))
afterAll(() => rmSync(fixture, { recursive: true, force: true }))
const files: Record<string, string> = {
  'modules/a/index.ts': "export { a } from './service.js'",
  'modules/a/service.ts': 'export const a = 1',
  'modules/b/index.ts': "export { b } from './service.js'",
  'modules/b/service.ts': "import type { a } from '../a/index.js'\nexport const b: typeof a = 2",
  'modules/b/service.test.ts': "import { c } from '../c/index.js'", // tests are not part of the graph
  'modules/c/index.ts': "export { c } from './service.js'",
  'modules/c/deep/service.ts': "export const c = await import('../../b/index.js')",
}
for (const [path, text] of Object.entries(files)) {
  mkdirSync(dirname(join(fixture, path)), { recursive: true })
  writeFileSync(join(fixture, path), text)
}
const at = (p: string) => join(fixture, p)
const options = [{ src: fixture }]

tsTester.run('one-way-imports: loops', layersPlugin.rules['one-way-imports'] as never, {
  valid: [
    { filename: at('modules/c/service.ts'), options, code: "import { b } from '../b/index.js'" },
    { filename: at('modules/b/routes.ts'), options, code: "import { a } from '../a/index.js'" },
    { filename: at('modules/a/routes.ts'), options, code: "import { x } from './service.js'" },
    { filename: at('app.ts'), options, code: "import { a } from './modules/a/index.js'" },
  ],
  invalid: [
    {
      filename: at('modules/a/routes.ts'),
      options,
      code: "import type { b } from '../b/index.js'",
      errors: [{ message: /^import loop a → b → a: modules\/b\/service\.ts imports "a"\. A module never imports/ }],
    },
    {
      filename: at('modules/a/routes.ts'),
      options,
      code: "export { c } from '../c/index.js'",
      errors: [
        {
          message:
            /^import loop a → c → b → a: modules\/c\/deep\/service\.ts imports "b", modules\/b\/service\.ts imports "a"\./,
        },
      ],
    },
    {
      filename: at('modules/b/deep/later.ts'),
      options,
      code: "const c = await import('../../c/index.js')",
      errors: [{ message: /^import loop b → c → b:/ }],
    },
  ],
})
