import { flagOption, parseCommand, planOptions } from './args.js'
import { clientFor, printJson, showHelp, type Context } from './context.js'
import { help } from './help.js'
import { fetchPlan } from './plan.js'
import { consentNeeded, formatInstall, formatPlan } from './print.js'
import type { Install } from './types.js'

/**
 * `plinth blueprint install <file>`: plans first (so the reader sees what will change and which bricks need
 * consent), then `POST /installs?apply=true`, the server applying every call as the caller. 0 when the
 * install is complete; 1 when the plan is not installable, consent is needed without --yes, or the install
 * ends partial (or is refused).
 */
export async function installCommand(argv: string[], ctx: Context): Promise<number> {
  const parsed = parseCommand(argv, { ...planOptions, yes: { type: 'boolean', short: 'y' } }, 1)
  if (parsed.values.help) return showHelp(ctx, help.install)
  const client = clientFor(ctx, parsed)
  const { input, request, secrets, plan, reply } = await fetchPlan(ctx, client, parsed)
  const consent = consentNeeded(plan)
  const yes = flagOption(parsed, 'yes')
  const stop = !plan.installable || (consent.length > 0 && !yes)
  if (ctx.json) {
    if (stop) printJson(ctx, reply)
  } else {
    ctx.io.stdout.write(formatPlan(input.label, plan, ctx.colours))
  }
  if (!plan.installable) {
    ctx.io.stderr.write('Not installed: the plan is not installable.\n')
    return 1
  }
  if (stop) {
    ctx.io.stderr.write(
      `Not installed: ${consent.length === 1 ? 'a brick needs' : `${consent.length} bricks need`} consent ` +
        `(${consent.join(', ')}). Review the plan, then run again with --yes to accept.\n`,
    )
    return 1
  }
  // The consent list is the plan's: a brick whose verdict changed since (another writer) is skipped, not applied.
  const installed = (await client.request('POST', '/api/v1/blueprints/installs?apply=true', {
    ...request,
    consent,
    ...(Object.keys(secrets).length > 0 ? { secrets } : {}),
  })) as { data: Install }
  if (ctx.json) printJson(ctx, installed)
  else ctx.io.stdout.write(`\n${formatInstall(installed.data, ctx.colours)}`)
  return installed.data.status === 'complete' ? 0 : 1
}
