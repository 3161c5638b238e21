import type { Container, ContainersService } from '../../containers/index.js'
import { containerCreateShape, CreateContainerSchema, UpdateContainerSchema } from '../../containers/index.js'
import {
  CreateLensAttachmentSchema,
  lensAttachmentCreateShape,
  UpdateLensAttachmentSchema,
  type LensAttachment,
  type LensAttachmentsService,
} from '../../lens-attachments/index.js'
import {
  CreateNavigationItemSchema,
  navigationItemCreateShape,
  UpdateNavigationItemSchema,
  type NavigationItem,
  type NavigationService,
} from '../../navigation/index.js'
import {
  CreateRendererSchema,
  rendererCreateShape,
  UpdateRendererSchema,
  type Renderer,
  type RenderersService,
} from '../../renderers/index.js'
import { CreateViewSchema, UpdateViewSchema, viewCreateShape, type View, type ViewsService } from '../../views/index.js'
import { isAppError } from '../../../lib/errors.js'
import type { LensesService } from '../../lenses/index.js'
import { allPages, resourceProvider, type BrickProvider } from './provider.js'

/** The builder resources' services (issue 29), as the providers call them. */
export interface BuilderServices {
  lenses: Pick<LensesService, 'get'>
  views: ViewsService
  navigation: NavigationService
  renderers: RenderersService
  lensAttachments: LensAttachmentsService
  containers: ContainersService
}

const without =
  (...keys: string[]) =>
  (desired: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(desired).filter(([key]) => !keys.includes(key)))

/** view, nav, renderer, attachment and container bricks (automation spec "Per-kind limits"). */
export function builderProviders(s: BuilderServices): BrickProvider[] {
  return [
    resourceProvider<View, unknown, unknown>({
      kind: 'view',
      route: '/api/v1/views',
      createSchema: CreateViewSchema,
      updateSchema: UpdateViewSchema,
      shape: viewCreateShape,
      // A shared view's name is the project's; a personal one's its owner's (the caller's, for a plan).
      key: ['name', 'shared'],
      idOf: (v) => v.id,
      all: (actor) => allPages((page, limit) => s.views.list(actor, page, limit)),
      get: (actor, id) => s.views.get(actor, id),
      create: (actor, input) => s.views.create(actor, input as never),
      update: (actor, id, input) => s.views.update(actor, id, input as never),
      remove: (actor, id) => s.views.delete(actor, id),
      updateBody: without('collection'),
      immutable: ['collection'],
    }),
    resourceProvider<NavigationItem, unknown, unknown>({
      kind: 'nav',
      route: '/api/v1/navigation',
      createSchema: CreateNavigationItemSchema,
      updateSchema: UpdateNavigationItemSchema,
      shape: navigationItemCreateShape,
      // Top-level items of the shared tree, by label (a nested item's parentId never matches a brick's).
      key: ['label', 'parentId'],
      idOf: (item) => item.id,
      all: (actor) => allPages((page, limit) => s.navigation.list(actor, page, limit)),
      get: (actor, id) => s.navigation.get(actor, id),
      create: (actor, input) => s.navigation.create(actor, input as never),
      update: (actor, id, input) => s.navigation.update(actor, id, input as never),
      remove: (actor, id) => s.navigation.delete(actor, id),
      notCompared: ['sortOrder'],
      // An item of that label nested in the tree is not the brick's top-level one (spec: live.nested_item).
      check: async (actor, desired) => {
        const items = await allPages((page, limit) => s.navigation.list(actor, page, limit))
        const nested = items.some((i) => i.label === desired.label && i.parentId !== null)
        const top = items.some((i) => i.label === desired.label && i.parentId === null)
        return nested && !top
          ? { code: 'live.nested_item', message: `The item "${String(desired.label)}" is nested in the tree` }
          : null
      },
    }),
    resourceProvider<Renderer, unknown, unknown>({
      kind: 'renderer',
      route: '/api/v1/renderers',
      createSchema: CreateRendererSchema,
      updateSchema: UpdateRendererSchema,
      shape: rendererCreateShape,
      key: ['name'],
      idOf: (r) => r.id,
      all: (actor) => allPages((page, limit) => s.renderers.list(actor, page, limit)),
      get: (actor, id) => s.renderers.get(actor, id),
      create: (actor, input) => s.renderers.create(actor, input as never),
      update: (actor, id, input) => s.renderers.update(actor, id, input as never),
      remove: (actor, id) => s.renderers.delete(actor, id),
    }),
    resourceProvider<LensAttachment, unknown, unknown>({
      kind: 'attachment',
      route: '/api/v1/lens-attachments',
      createSchema: CreateLensAttachmentSchema,
      updateSchema: UpdateLensAttachmentSchema,
      shape: lensAttachmentCreateShape,
      // A lens is offered once per collection and placement; only the label changes in place.
      key: ['lensId', 'collection', 'placement'],
      idOf: (a) => a.id,
      all: (actor) => allPages((page, limit) => s.lensAttachments.list(actor, page, limit)),
      get: (actor, id) => s.lensAttachments.get(actor, id),
      create: (actor, input) => s.lensAttachments.create(actor, input as never),
      update: (actor, id, input) => s.lensAttachments.update(actor, id, input as never),
      remove: (actor, id) => s.lensAttachments.delete(actor, id),
      updateBody: without('lensId', 'collection'),
      immutable: ['lensId', 'collection'],
      // The lens is named by its id and must be there (spec: attachment.lens_missing).
      check: async (actor, desired) => {
        const lens = await s.lenses.get(actor, String(desired.lensId)).catch((err: unknown) => {
          if (isAppError(err) && err.code === 'not_found') return null
          throw err
        })
        return lens
          ? null
          : { code: 'attachment.lens_missing', message: `No lens ${String(desired.lensId)} in this project` }
      },
    }),
    resourceProvider<Container, unknown, unknown>({
      kind: 'container',
      route: '/api/v1/containers',
      createSchema: CreateContainerSchema,
      updateSchema: UpdateContainerSchema,
      shape: containerCreateShape,
      key: ['name'],
      idOf: (c) => c.id,
      all: (actor) => allPages((page, limit) => s.containers.list(actor, page, limit)),
      get: (actor, id) => s.containers.get(actor, id),
      create: (actor, input) => s.containers.create(actor, input as never),
      update: (actor, id, input) => s.containers.update(actor, id, input as never),
      remove: (actor, id) => s.containers.delete(actor, id),
      // Where bytes go and which variants are made belong to the instance (spec: not compared).
      notCompared: ['storageConnectionId', 'bucketName', 'imageSizes'],
      warnings: (_actor, desired) =>
        ['storageConnectionId', 'bucketName', 'imageSizes'].some((k) => desired[k] !== undefined)
          ? [
              {
                code: 'container.instance_local_members',
                message: 'storageConnectionId, bucketName and imageSizes belong to the instance and are not compared',
              },
            ]
          : [],
    }),
  ]
}
