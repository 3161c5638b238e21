import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe } from 'vitest'
import { runHostileKeyContract } from './contract-hostile-keys.js'
import { runObjectContract } from './contract-objects.js'
import type { StorageContractContext, StorageFixture } from './contract-support.js'
import { runSingleUseContract } from './contract-uploads.js'
import { runPresignedUrlContract } from './contract-urls.js'

export type { StorageFixture } from './contract-support.js'
export { readAll, sha256, shiftableClock, tamperSignature } from './contract-support.js'

/**
 * The behaviour every ObjectStorage driver shares, over real HTTP against a real peer. Run by
 * local.test.ts and s3.test.ts: a driver that passes here can stand in for the other. Each capability
 * group is its own file (contract-*.ts).
 */
export function runStorageContract(name: string, setup: () => Promise<StorageFixture>): void {
  describe(`object storage contract: ${name}`, () => {
    let fixture: StorageFixture
    let n = 0
    const context: StorageContractContext = {
      storage: () => fixture.storage,
      fixture: () => fixture,
      freshKey: (name = 'object.bin') => `projects/contract/${++n}-${randomBytes(4).toString('hex')}/${name}`,
    }

    beforeAll(async () => {
      fixture = await setup()
    })
    afterAll(async () => {
      fixture.shiftClock(0)
      await fixture.close()
    })

    runObjectContract(context)
    runPresignedUrlContract(context)
    runSingleUseContract(context)
    runHostileKeyContract(context)
  })
}
