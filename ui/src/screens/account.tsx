import { useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../api.js'
import { Notice, Time, type UserRow } from '../components/access-common.js'
import { Button, ProblemNote, TextField } from '../components/form.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import { Link } from '../router.js'
import type { ScreenProps } from '../screen-props.js'
import { useSession } from '../session.js'
import './access.css'

/** /account: who is signed in, and their two-factor sign-in (TOTP). */
export function Account(_props: ScreenProps) {
  const session = useSession()
  const me = session.session.user
  // The full account (two-factor state, last sign-in) is readable with system/users:read; without it the
  // session's fields are all there is, and whether two-factor is on is not known.
  // Only an administrator asks (another role would be refused, and the refusal is noise in the console).
  const account = useAsync(
    async () =>
      !session.admin
        ? null
        : client.transport
            .request<{ data: UserRow }>('GET', `/api/v1/users/${encodeURIComponent(me.id)}`)
            .then((r) => r.data)
            .catch((): UserRow | null => null),
    [me.id, session.admin],
  )
  const full = account.value ?? null
  return (
    <Page title="Your account">
      <section class="card" aria-labelledby="account-details">
        <h2 id="account-details">Details</h2>
        <dl class="access-details">
          <dt>Name</dt>
          <dd>{me.name || '—'}</dd>
          <dt>Email</dt>
          <dd>{me.email ?? '—'}</dd>
          {me.username ? (
            <>
              <dt>Username</dt>
              <dd>{me.username}</dd>
            </>
          ) : null}
          <dt>Role</dt>
          <dd>{me.role}</dd>
          <dt>Project</dt>
          <dd>
            <code>{me.projectId}</code>
          </dd>
          {full ? (
            <>
              <dt>Member since</dt>
              <dd>
                <Time seconds={full.createdAt} />
              </dd>
            </>
          ) : null}
          <dt>This session ends</dt>
          <dd>
            <Time seconds={session.session.session.expiresAt} />
          </dd>
        </dl>
        <p class="hint">
          To change your password, use “Forgot password” on the sign-in page: Plinth mails you a reset link. Your API
          keys are on the <Link to="/keys">API keys</Link> page.
        </p>
      </section>
      {account.loading && account.value === undefined ? (
        <p role="status">Loading…</p>
      ) : (
        <TwoFactor
          known={me.totpEnabled}
          onChanged={async () => {
            await Promise.all([session.refresh(), account.reload()])
          }}
        />
      )}
    </Page>
  )
}

type Step = { kind: 'idle' } | { kind: 'enrolling'; secret: string; uri: string }

/** Turning two-factor on (enrol, then confirm with a code) and off (with a code). */
function TwoFactor(props: { known: boolean | null; onChanged: () => Promise<void> }) {
  const [on, setOn] = useState<boolean | null>(props.known)
  const [step, setStep] = useState<Step>({ kind: 'idle' })
  const [code, setCode] = useState('')
  const [offCode, setOffCode] = useState('')
  const [problem, setProblem] = useState<Problem | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)

  const run = async (work: () => Promise<void>) => {
    setBusy(true)
    setProblem(null)
    setNotice(null)
    try {
      await work()
    } catch (err) {
      setProblem(problemOf(err))
    } finally {
      setBusy(false)
    }
  }

  return (
    <section class="card" aria-labelledby="two-factor">
      <h2 id="two-factor">Two-factor sign-in</h2>
      <p>
        {on === true
          ? 'Two-factor sign-in is on: signing in asks for a code from your authenticator app.'
          : on === false
            ? 'Two-factor sign-in is off. Turn it on to be asked for a code from an authenticator app at sign-in.'
            : 'With two-factor sign-in, signing in also asks for a code from an authenticator app.'}
      </p>
      <ProblemNote problem={problem} />
      <Notice text={notice} />
      {on !== true && step.kind === 'idle' ? (
        <Button
          variant="primary"
          disabled={busy}
          onClick={() =>
            run(async () => {
              const { secret, uri } = await client.auth.totp.enroll()
              setStep({ kind: 'enrolling', secret, uri })
              setCode('')
            })
          }
        >
          Turn on two-factor sign-in
        </Button>
      ) : null}
      {step.kind === 'enrolling' ? (
        <div class="access-enrol">
          <p>
            Add this account to your authenticator app: enter the secret, or paste the otpauth address into an app that
            accepts one. Then type the 6-digit code it shows.
          </p>
          <h3 id="totp-secret-label">Secret</h3>
          <p class="secret" aria-labelledby="totp-secret-label" data-testid="totp-secret">
            {step.secret}
          </p>
          <h3 id="totp-uri-label">otpauth address</h3>
          <p class="secret" aria-labelledby="totp-uri-label" data-testid="totp-uri">
            {step.uri}
          </p>
          <form
            onSubmit={(e) => {
              e.preventDefault()
              void run(async () => {
                await client.auth.totp.confirm(code.trim())
                setStep({ kind: 'idle' })
                setOn(true)
                setNotice('Two-factor sign-in is on.')
                await props.onChanged()
              })
            }}
          >
            <TextField
              label="Code from the app"
              inputMode="numeric"
              autoComplete="one-time-code"
              pattern="[0-9]{6}"
              value={code}
              onValue={setCode}
            />
            <div class="inline">
              <Button type="submit" variant="primary" disabled={busy}>
                Confirm and turn on
              </Button>
              <Button onClick={() => setStep({ kind: 'idle' })}>Cancel</Button>
            </div>
          </form>
        </div>
      ) : null}
      {on !== false && step.kind === 'idle' ? (
        <form
          class="access-totp-off"
          onSubmit={(e) => {
            e.preventDefault()
            void run(async () => {
              await client.auth.totp.disable(offCode.trim())
              setOn(false)
              setOffCode('')
              setNotice('Two-factor sign-in is off.')
              await props.onChanged()
            })
          }}
        >
          <h3>Turn it off</h3>
          <TextField
            label="Current code from the app"
            inputMode="numeric"
            autoComplete="one-time-code"
            pattern="[0-9]{6}"
            value={offCode}
            onValue={setOffCode}
          />
          <Button type="submit" variant="danger" disabled={busy}>
            Turn off two-factor sign-in
          </Button>
        </form>
      ) : null}
    </section>
  )
}
