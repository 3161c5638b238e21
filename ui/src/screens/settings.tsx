import { Page } from '../components/page.js'
import type { ScreenProps } from '../screen-props.js'

// PLACEHOLDER: replaced by the screen's real implementation.
export function Settings(_props: ScreenProps) {
  return (
    <Page title="Settings">
      <p>Not built yet.</p>
    </Page>
  )
}
