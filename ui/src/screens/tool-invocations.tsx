import { Page } from '../components/page.js'
import type { ScreenProps } from '../screen-props.js'

// PLACEHOLDER: replaced by the screen's real implementation.
export function ToolInvocations(_props: ScreenProps) {
  return (
    <Page title="ToolInvocations">
      <p>Not built yet.</p>
    </Page>
  )
}
