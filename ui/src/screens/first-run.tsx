import { useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../api.js'
import { Button, ProblemNote, TextField } from '../components/form.js'

/** A fresh instance: the first account made here is the owner (super_admin). */
export function FirstRun(props: { onCreated: () => void }) {
  const [name, setName] = useState('')
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [problem, setProblem] = useState<Problem | null>(null)
  const [busy, setBusy] = useState(false)

  async function submit(event: Event) {
    event.preventDefault()
    setBusy(true)
    setProblem(null)
    try {
      await client.auth.signUp({ name, email, password })
      props.onCreated()
    } catch (err) {
      setProblem(problemOf(err))
    } finally {
      setBusy(false)
    }
  }

  const fieldError = (field: string) => (problem?.field === field ? problem.message : undefined)
  return (
    <main class="auth-screen">
      <form class="auth-card" onSubmit={submit} aria-labelledby="first-run-title">
        <h1 id="first-run-title">Welcome to Plinth</h1>
        <p>Create the owner account. It can do everything in every project; keep its password safe.</p>
        <ProblemNote problem={problem} />
        <TextField label="Your name" value={name} onValue={setName} autoComplete="name" required name="name" />
        <TextField
          label="Email"
          type="email"
          value={email}
          onValue={setEmail}
          autoComplete="email"
          required
          name="email"
          error={fieldError('email')}
        />
        <TextField
          label="Password"
          type="password"
          value={password}
          onValue={setPassword}
          autoComplete="new-password"
          required
          minLength={8}
          name="password"
          hint="At least 8 characters."
          error={fieldError('password')}
        />
        <Button type="submit" variant="primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create the owner'}
        </Button>
      </form>
    </main>
  )
}
