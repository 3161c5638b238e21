const common = `  --url <url>               the instance (default: $PLINTH_URL, else http://127.0.0.1:$PORT or :8090)
  --json                    print the API's raw JSON response instead
  -h, --help                print this help`

const footer = `The credential comes from the environment, never a flag: PLINTH_TOKEN (a session token or an sk- key).
Exit codes: 0 ok; 1 an error diagnostic, a BLOCKED brick, an install not complete, an API error; 2 usage.`

const planFlags = `  --param <name=value>      a parameter value (repeatable; typed as the document declares it)
  --assemblies <a,b>        the assemblies to install (default: all; required ones always)
  --secrets-provided <a,b>  secret parameters the project already holds`

const secretNote = `A secret parameter's value is read from the environment as PLINTH_SECRET_<name>, never from a flag.`

export const help = {
  blueprint: `Usage: plinth blueprint <command> [options]

Commands:
  validate <file>   check a blueprint (.md document or .zip archive; - reads stdin)
  plan <file>       show what installing it would do, as a diff; writes nothing
  install <file>    plan, then install it (the server applies every call); --yes to consent
  export            write part or all of the project as a blueprint document

Options:
${common}

Run 'plinth blueprint <command> --help' for a command's options.
${footer}`,

  validate: `Usage: plinth blueprint validate <file> [options]

Checks a blueprint document (.md, .ebp.md) or a zip archive holding one (.zip). Prints each diagnostic as
file:line: severity code [brick] message. Exit 1 when any diagnostic is an error.

Options:
${common}

${footer}`,

  plan: `Usage: plinth blueprint plan <file> [options]

Shows what installing the blueprint would do, one line per brick:
  + CREATE / RECREATE   ~ UPDATE / ADOPT / DRIFTED (changed: …)   = NOOP   . SKIPPED
  ! BLOCKED: reason     x CLAIMED (another blueprint's)           - orphan (left in place)
then missing secrets and the bricks that need consent. Exit 1 when not installable (an error or BLOCKED).

Options:
${planFlags}
${common}

${secretNote}
${footer}`,

  install: `Usage: plinth blueprint install <file> [options]

Plans the blueprint, then installs it: the server applies every call as you and records the install.
Bricks that need consent (grants, an adopted or drifted resource with changes) are applied only with --yes;
without it the plan is printed and nothing is installed (exit 1) unless no brick needs consent. Exit 1 also
when the plan is not installable or the install ends other than complete.

Options:
${planFlags}
  -y, --yes                 consent to every brick the plan marks [needs consent]
${common}

${secretNote}
${footer}`,

  export: `Usage: plinth blueprint export --namespace <prefix> [--<kind> a,b …] [options]

Writes resources of the project as a blueprint document. --namespace (required) is the prefix their names
embed (desk in desk_tickets). Each other flag is sent as the export's query, comma lists and repeats joined,
kebab-case made camelCase, a flag without a value as true:
  --collections --roles --containers --search-indexes --scripts --lenses --renderers --views --webhooks
  --flows   names or ids, or * for every one holding the namespace
  --records <collection[:keyColumn],…>   --nav   --access false   --grants false   --attachments false
  --id --name --version   the envelope
Flags the export learns later pass through the same way; one it does not know, it refuses.

Options:
  -o, --output <file>       write the document there (default: stdout)
${common}

${footer}`,
}
