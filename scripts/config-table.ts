// Prints the settings table of docs/configuration.md from src/config.ts (a test keeps the two in step).
import { settings } from '../src/config.js'

const rows = Object.entries(settings).map(
  ([name, s]) => `| \`${name}\` | ${s.default === '' ? '(unset)' : `\`${s.default}\``} | ${s.doc} |`,
)
console.log(['| Setting | Default | What it does |', '|---|---|---|', ...rows].join('\n'))
