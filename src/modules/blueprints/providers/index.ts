import { accessProviders, type AccessServices } from './access.js'
import { automationProviders, type AutomationServices } from './automation.js'
import { builderProviders, type BuilderServices } from './builder.js'
import { collectionProviders, type CollectionServices } from './collections.js'
import type { BrickProvider } from './provider.js'
import { recordsProvider, type RecordServices } from './records.js'

export type ProviderServices = AccessServices &
  AutomationServices &
  BuilderServices &
  CollectionServices &
  RecordServices

/** One provider per brick kind, by kind (issue 30 item 3). */
export function brickProviders(s: ProviderServices): ReadonlyMap<string, BrickProvider> {
  return new Map(
    [
      ...collectionProviders(s),
      ...accessProviders(s),
      recordsProvider(s),
      ...automationProviders(s),
      ...builderProviders(s),
    ].map((p) => [p.kind, p]),
  )
}

export type { BrickProvider, Finding, LiveResource, ProposedCall } from './provider.js'
