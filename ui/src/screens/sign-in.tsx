import type { Capabilities } from '../session.js'
import { MfaRequiredError } from '@plinth/client'
import { useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../api.js'
import { Button, ProblemNote, TextField } from '../components/form.js'

/** Sign in by email (or username when the instance allows it), with the TOTP code when the account asks. */
export function SignIn(props: { capabilities: Capabilities; onSignedIn: () => void; notice?: Problem | null }) {
  const [identifier, setIdentifier] = useState('')
  const [password, setPassword] = useState('')
  const [code, setCode] = useState('')
  const [needsCode, setNeedsCode] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(props.notice ?? null)
  const [busy, setBusy] = useState(false)
  const [linkSent, setLinkSent] = useState(false)

  async function submit(event: Event) {
    event.preventDefault()
    setBusy(true)
    setProblem(null)
    try {
      const byEmail = identifier.includes('@') || !props.capabilities.usernameEnabled
      const secret = { password, ...(needsCode ? { code } : {}) }
      await client.auth.signIn(byEmail ? { email: identifier, ...secret } : { username: identifier, ...secret })
      props.onSignedIn()
    } catch (err) {
      if (err instanceof MfaRequiredError) setNeedsCode(true)
      else setProblem(problemOf(err))
    } finally {
      setBusy(false)
    }
  }

  async function magicLink() {
    setProblem(null)
    try {
      await client.transport.request('POST', '/api/auth/magic-link', {
        body: { email: identifier, callbackURL: `${location.origin}/_/` },
      })
      setLinkSent(true)
    } catch (err) {
      setProblem(problemOf(err))
    }
  }

  return (
    <main class="auth-screen">
      <form class="auth-card" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in to Plinth</h1>
        <ProblemNote problem={problem} />
        <TextField
          label={props.capabilities.usernameEnabled ? 'Email or username' : 'Email'}
          value={identifier}
          onValue={setIdentifier}
          autoComplete="username"
          required
          name="identifier"
        />
        <TextField
          label="Password"
          type="password"
          value={password}
          onValue={setPassword}
          autoComplete="current-password"
          required
          name="password"
        />
        {needsCode ? (
          <TextField
            label="Code from your authenticator app"
            value={code}
            onValue={setCode}
            inputMode="numeric"
            autoComplete="one-time-code"
            pattern="\d{6}"
            required
            name="code"
            hint="Two-factor authentication is on for this account."
          />
        ) : null}
        <Button type="submit" variant="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </Button>
        {props.capabilities.magicLink ? (
          linkSent ? (
            <p role="status">If that address has an account, a sign-in link is on its way.</p>
          ) : (
            <Button onClick={magicLink} disabled={!identifier.includes('@')}>
              Email me a sign-in link
            </Button>
          )
        ) : null}
      </form>
    </main>
  )
}
