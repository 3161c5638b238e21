import type { ComponentChildren } from 'preact'
import { useEffect } from 'preact/hooks'

/** A screen's frame: its heading (and the document title), actions beside it, the content below. */
export function Page(props: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  useEffect(() => {
    document.title = `${props.title} · Plinth`
  }, [props.title])
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-header">
        <h1 id="page-title">{props.title}</h1>
        {props.actions ? <div class="page-actions">{props.actions}</div> : null}
      </header>
      {props.children}
    </section>
  )
}
