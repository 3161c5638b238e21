import { z } from 'zod'
import {
  collectionCreateShape,
  collectionDesiredShape,
  type Collection,
  type CollectionsService,
} from '../../collections/index.js'
import { resourceProvider, type BrickProvider } from './provider.js'

export interface CollectionServices {
  collections: CollectionsService
}

/** The collection as its GET answers it (the reader's input). */
function wire(c: Collection) {
  return {
    name: c.name,
    storageType: c.storageType,
    databaseId: c.databaseId,
    fields: c.fields as unknown as Record<string, unknown>[],
    indexes: c.indexes.map((i) => ({ fields: [...i.fields], unique: i.unique })),
    accessControl: c.accessControl,
  }
}

/**
 * collection bricks. The preset a collection brick states is its creation's; afterwards the access config
 * is the access brick's, so it is not compared here (else the two bricks would undo each other).
 */
export function collectionProviders(s: CollectionServices): BrickProvider[] {
  return [
    resourceProvider<Collection, unknown, unknown>({
      kind: 'collection',
      route: '/api/v1/collections',
      // The collections service checks its own bodies; the desired shape is made without reading.
      createSchema: z.unknown(),
      updateSchema: z.unknown(),
      desiredOf: collectionDesiredShape,
      shape: (c) => collectionCreateShape(wire(c)),
      key: ['name'],
      idOf: (c) => c.name,
      all: (actor) => s.collections.visibleTo(actor),
      get: (actor, name) => s.collections.visible(actor, name),
      create: (actor, input) => s.collections.create(actor, input as never),
      update: async (actor, name, input) => (await s.collections.update(actor, name, input as never)).collection,
      remove: (actor, name) => s.collections.delete(actor, name),
      updateBody: ({ fields, indexes }) => ({ fields, indexes }),
      notCompared: ['accessControl'],
      immutable: ['storageType', 'databaseId'],
    }),
  ]
}
