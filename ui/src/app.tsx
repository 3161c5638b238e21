import { useCallback, useEffect, useState } from 'preact/hooks'
import { client, problemOf, type Problem } from './api.js'
import { ProblemNote } from './components/form.js'
import { NavigationTree } from './components/navigation-tree.js'
import { Link, match, navigate, useLocation } from './router.js'
import { screens, type Section } from './screens/index.js'
import { FirstRun } from './screens/first-run.js'
import { SignIn } from './screens/sign-in.js'
import { SessionContext, useSession as useSessionValue, type Capabilities, type SignedIn } from './session.js'
import type { Session } from '@plinth/client'

type State =
  | { kind: 'loading' }
  | { kind: 'signed-out'; capabilities: Capabilities }
  | { kind: 'signed-in'; session: Session }
  | { kind: 'unreachable'; problem: Problem }

/** The whole UI: who is here decides between the first-run form, sign-in, and the shell. */
export function App() {
  const [state, setState] = useState<State>({ kind: 'loading' })
  const [projectId, setProjectId] = useState<string | null>(null)
  const [linkProblem, setLinkProblem] = useState<Problem | null>(null)

  const load = useCallback(async () => {
    // A magic link's callback carries a session token in the address: trade it for a cookie session at
    // once (the token in the address bar and history then stops working), and drop it from the address.
    const fromLink = new URLSearchParams(location.hash.slice(1)).get('token')
    if (fromLink) {
      history.replaceState(null, '', location.pathname + location.search)
      try {
        await client.transport.request('POST', '/api/auth/renew-session', {
          headers: { authorization: `Bearer ${fromLink}` },
        })
      } catch (err) {
        setLinkProblem({ ...problemOf(err), message: 'That sign-in link has expired or was used. Sign in below.' })
      }
    }
    try {
      setState({ kind: 'signed-in', session: await client.auth.session() })
    } catch (err) {
      const problem = problemOf(err)
      if (problem.status !== 401) {
        setState({ kind: 'unreachable', problem })
        return
      }
      try {
        const capabilities = await client.transport.request<Capabilities>('GET', '/api/auth/capabilities')
        setState({ kind: 'signed-out', capabilities })
      } catch (again) {
        setState({ kind: 'unreachable', problem: problemOf(again) })
      }
    }
  }, [])
  useEffect(() => {
    void load()
  }, [load])

  if (state.kind === 'loading')
    return (
      <p class="loading" role="status">
        Loading…
      </p>
    )
  if (state.kind === 'unreachable')
    return (
      <main class="auth-screen">
        <ProblemNote problem={state.problem} />
      </main>
    )
  if (state.kind === 'signed-out')
    return state.capabilities.firstRun ? (
      <FirstRun onCreated={load} />
    ) : (
      <SignIn capabilities={state.capabilities} onSignedIn={load} notice={linkProblem} />
    )

  const session = state.session
  const signedIn: SignedIn = {
    session,
    admin: ['super_admin', 'admin'].includes(session.user.role),
    projectId: projectId ?? session.user.projectId,
    refresh: load,
    async signOut() {
      await client.auth.signOut().catch(() => undefined)
      client.transport.project = null
      setProjectId(null)
      navigate('/', { replace: true })
      await load()
    },
    switchProject(id) {
      client.transport.project = id === session.user.projectId ? null : id
      setProjectId(id)
    },
  }
  return (
    <SessionContext.Provider value={signedIn}>
      <Shell key={signedIn.projectId} />
    </SessionContext.Provider>
  )
}

const sections: readonly Section[] = ['Data', 'Automation', 'Access', 'System', 'Activity']

function Shell() {
  const location = useLocation()
  const [menuOpen, setMenuOpen] = useState(false)
  useEffect(() => setMenuOpen(false), [location.path])
  const found = screens
    .map((screen) => ({ screen, params: match(screen.path, location.path) }))
    .find((m) => m.params !== null)
  const Screen = found?.screen.component
  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <button
          type="button"
          class="button menu-button"
          aria-expanded={menuOpen}
          aria-controls="sidebar"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <Link to="/" class="brand">
          Plinth
        </Link>
        <ProjectSwitcher />
        <UserMenu />
      </header>
      <nav id="sidebar" class={menuOpen ? 'sidebar open' : 'sidebar'} aria-label="Main">
        <NavigationTree />
        {sections.map((section) => {
          const entries = screens.filter((s) => s.nav?.section === section)
          if (entries.length === 0) return null
          return (
            <div class="nav-section" key={section}>
              <h2>{section}</h2>
              <ul>
                {entries.map((s) => {
                  const active = s.path === '/' ? location.path === '/' : location.path.startsWith(s.path)
                  return (
                    <li key={s.path}>
                      <Link to={s.path} aria-current={active ? 'page' : undefined}>
                        {s.nav!.label}
                      </Link>
                    </li>
                  )
                })}
              </ul>
            </div>
          )
        })}
      </nav>
      <main id="main" class="main" tabIndex={-1}>
        {Screen && found ? (
          <Screen params={found.params!} query={location.query} />
        ) : (
          <section class="page">
            <h1>Not found</h1>
            <p>
              There is no page at this address. <Link to="/">Go to the overview</Link>.
            </p>
          </section>
        )}
      </main>
    </div>
  )
}

function ProjectSwitcher() {
  const [projects, setProjects] = useState<{ id: string; name: string }[]>([])
  const session = useSessionValue()
  useEffect(() => {
    if (session.session.user.role !== 'super_admin') return
    client.transport
      .request<{ data: { id: string; name: string }[] }>('GET', '/api/v1/projects')
      .then((r) => setProjects(r.data))
      .catch(() => setProjects([]))
  }, [session.session.user.role])
  if (projects.length < 2) return null
  return (
    <label class="project-switcher">
      <span>Project</span>
      <select
        value={session.projectId}
        onChange={(e) => session.switchProject((e.currentTarget as HTMLSelectElement).value)}
      >
        {projects.map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
      </select>
    </label>
  )
}

function UserMenu() {
  const session = useSessionValue()
  return (
    <div class="user-menu">
      <Link to="/account">{session.session.user.name || session.session.user.email}</Link>
      <button type="button" class="button button-plain" onClick={() => void session.signOut()}>
        Sign out
      </button>
    </div>
  )
}
