/** What the parent sends a child: one job at a time. */
export interface ToChild {
  readonly id: number
  readonly job: unknown
}

/** What a child sends back: once `ready` (after its imports), then each part of a job as it is done, then `done`. */
export type FromChild =
  | { readonly type: 'ready' }
  | { readonly type: 'part'; readonly id: number; readonly index: number; readonly value: unknown }
  | { readonly type: 'done'; readonly id: number }
