/** The --help texts of `plinth types`, `admin`, `users` and `keys` (docs/cli.md). */

const common = `  --url <url>          the instance (default: $PLINTH_URL, else http://127.0.0.1:$PORT or :8090)
  --json               print the API's JSON answer instead
  -h, --help           print this help`

const credential = `The credential comes from the environment, never a flag: PLINTH_TOKEN (a session token or an sk- key).`
const exits = `Exit codes: 0 ok; 1 the API refused or could not be reached (its code and status on stderr); 2 usage.`

export const adminHelp = {
  types: `Usage: plinth types [--collections a,b] [--out file] [options]

Writes TypeScript types for the project's collections, read from the live schema (GET /api/v1/collections:
the collections the credential may read). One interface per collection (its name PascalCase), an Expand
interface of its relation fields, and Collections, the map createClient<Collections>() takes.

Options:
  --collections <a,b>  only these collections (repeatable); a relation to one left out reads as PlinthAnyRecord
  -o, --out <file>     write the types there (default: stdout)
${common}

${credential}
Exit codes: 0 ok; 1 an API error, a collection not found, a file not written; 2 usage.`,

  admin: `Usage: plinth admin create --email <email> [--name <name>] [--password-stdin]

Commands:
  create   create the install's owner (its first account, super_admin) in the configured database

Run 'plinth admin create --help' for its options.`,

  adminCreate: `Usage: plinth admin create --email <email> [--name <name>] [--password-stdin]

Creates the owner of a new install: its first account, super_admin of the default project, as the first
sign-up would. It opens the database the server's settings name (DATA_DIR, DATABASE_URL: see
docs/configuration.md) and runs pending migrations first; no server needs to be running. Refused when any
account exists already.

The password is typed at a prompt that does not echo it (twice), or read from standard input with
--password-stdin (one trailing newline dropped). It is never an argument. It must be 8 to 256 characters,
as sign-up requires.

Options:
  --email <email>      the owner's email (required)
  --name <name>        the display name (default: the email's part before @)
  --password-stdin     read the password from standard input
  -h, --help           print this help

Exit codes: 0 created; 1 refused (an account exists, a weak password, passwords differ, a bad setting); 2 usage.`,

  users: `Usage: plinth users <command> [options]

Commands:
  list                    every user of the project (id, email, role, status, name)
  ban <id|email>          ban a user (--unban lifts it): their sessions and keys stop at once

Options:
${common}

Run 'plinth users <command> --help' for a command's options. Needs system/users:read (list) and
system/users:update (ban), as the API does.
${credential}
${exits}`,

  usersList: `Usage: plinth users list [options]

Prints every user of the project the credential acts in: ID, EMAIL (or the username), ROLE,
STATUS (active or banned), NAME; the count on stderr. With --json, { data: [users], total }.

Options:
${common}

${credential}
${exits}`,

  usersBan: `Usage: plinth users ban <id|email> [--unban] [options]

Bans the user (PATCH /api/v1/users/:id { banned: true }): their sessions and API keys are refused from
the next request on, and they cannot sign in. --unban lifts the ban. An email is looked up in the user
list; an address several accounts share is refused (give the id).

Options:
  --unban              lift the ban instead
${common}

${credential}
${exits}`,

  keys: `Usage: plinth keys <command> [options]

Commands:
  create --name <label> --scopes <a,b>   create an API key; its secret is printed once, on stdout
  list                                   the keys (the project's for an administrator, else your own)
  revoke <id>                            revoke a key: refused at once, on every instance

Options:
${common}

Keys are managed from a signed-in session: PLINTH_TOKEN must be a session token, not an sk- key (403).
${exits}`,

  keysCreate: `Usage: plinth keys create --name <label> --scopes <a,b> [--expires <when>] [--service] [options]

Creates an API key acting for you, bounded by its scopes and by your own permissions. The secret (sk-…)
is printed on stdout alone, once (KEY=$(plinth keys create …) holds just it); the key's id and details go
to stderr. With --json the API's whole answer, secret included, goes to stdout.

Options:
  --name <label>       the key's label (required)
  --scopes <a,b>       its permissions, e.g. collections/tickets:read (required; repeatable)
  --expires <when>     a duration (90m, 12h, 30d, 8w), a date or date-time (2027-01-31, read as UTC),
                       or Unix seconds; default: never
  --service            a service key bound to no user (super_admin only)
${common}

Keys are managed from a signed-in session: PLINTH_TOKEN must be a session token, not an sk- key.
${exits}`,

  keysList: `Usage: plinth keys list [options]

Prints the keys: ID, KIND (user or service), EXPIRES, LAST USED, LABEL. Never a secret.

Options:
${common}

${credential}
${exits}`,

  keysRevoke: `Usage: plinth keys revoke <id> [options]

Revokes the key: every request with it is 401 from now on, on every instance. Its creator or an
administrator may.

Options:
${common}

${credential}
${exits}`,
}
