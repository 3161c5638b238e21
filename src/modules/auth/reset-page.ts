/**
 * The page a mailed reset link opens when no `redirectTo` was given: one form, no external assets, that
 * posts the token and the new password to POST /api/auth/reset-password. The token stays in the page.
 */
export function resetPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Choose a new password</title>
<style>body{font:16px system-ui,sans-serif;max-width:24rem;margin:4rem auto;padding:0 1rem}input,button{font:inherit;width:100%;margin:.4rem 0;padding:.5rem;box-sizing:border-box}#msg{margin-top:1rem}</style>
</head>
<body>
<h1>Choose a new password</h1>
<form id="f">
<label>New password <input type="password" id="p" minlength="8" maxlength="256" required autocomplete="new-password"></label>
<label>Repeat it <input type="password" id="q" minlength="8" maxlength="256" required autocomplete="new-password"></label>
<button type="submit">Set password</button>
</form>
<p id="msg" role="status"></p>
<script>
const token = new URLSearchParams(location.search).get('token') || ''
history.replaceState(null, '', location.pathname)
const msg = document.getElementById('msg')
document.getElementById('f').addEventListener('submit', async (e) => {
  e.preventDefault()
  const p = document.getElementById('p').value
  if (p !== document.getElementById('q').value) { msg.textContent = 'The two passwords differ.'; return }
  const res = await fetch('/api/auth/reset-password', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token, password: p }) })
  const body = await res.json().catch(() => ({}))
  msg.textContent = res.ok ? 'Your password is changed. You can sign in now.' : (body.message || 'This link did not work.')
  if (res.ok) document.getElementById('f').remove()
})
</script>
</body>
</html>
`
}
