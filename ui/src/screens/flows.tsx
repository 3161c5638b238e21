import { Page } from '../components/page.js'
import type { ScreenProps } from '../screen-props.js'

// PLACEHOLDER: replaced by the screen's real implementation.
export function Flows(_props: ScreenProps) {
  return (
    <Page title="Flows">
      <p>Not built yet.</p>
    </Page>
  )
}
