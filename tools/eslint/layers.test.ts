import { resolve } from 'node:path'
import { RuleTester } from 'eslint'
import { describe, it } from 'vitest'
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
    { filename: src('migrations/system/0009-x.ts'), code: "import { x } from '../../modules/projects/index.js'", errors: 1 },
  ],
})
