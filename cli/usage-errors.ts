/**
 * yargs' usage messages, reworded so each says what is wrong in plain words and what to do
 * (issue 23): a missing argument is named, an unknown option gets the closest real one.
 */
import { isIP } from 'node:net';
import { cutText } from '../functions/core/cut-text';
import { escapeControl } from '../functions/core/log';
import { closest } from '../functions/core/suggest';

/** What each command's positional argument is, for "missing argument" messages. */
const POSITIONALS: Record<string, string> = {
  subscribe: '<name>: the name of the new subscription, e.g. pr-review',
  show: '<name>: which subscription to show (hookagent webhook list names them)',
  update: '<name>: which subscription to change',
  delete: '<name>: which subscription to delete',
  pause: '<name>: which subscription to pause',
  resume: '<name>: which subscription to resume',
  test: '<name>: which subscription to test',
  events: '<name>: whose events to list',
  replay: '<event-id>: the event to queue again (hookagent webhook events <name> lists ids)',
  event: '<event-id>: the event to show (hookagent webhook events <name> lists ids)',
  set: '<name>: the secret variable, e.g. GITHUB_TOKEN',
  delete_secret: '<name>: the secret variable to delete',
};

const TOP_LEVEL = ['webhook', 'secrets', 'status', 'serve', 'console', 'completion'];

/** The commands of `webhook` and `secrets` (as main.ts and operations/register.ts declare them). */
export const GROUP_COMMANDS: Record<'webhook' | 'secrets', readonly string[]> = {
  webhook: ['subscribe', 'list', 'show', 'update', 'delete', 'pause', 'resume', 'test', 'events', 'event', 'usage', 'replay', 'requests', 'dead-letters', 'redrive'],
  secrets: ['set', 'list', 'delete'],
};

/** The global options that take a value, which may stand between `webhook` and its command. */
const GLOBAL_VALUE_OPTIONS = new Set(['--config-dir', '--stage', '--region']);

/** The command word after `webhook`/`secrets` (args[group]), skipping global options and their values. */
function commandAfter(args: readonly string[], group: number): string {
  for (let i = group + 1; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    if (arg === '--') return '';
    if (!arg.startsWith('-')) return arg;
    if (GLOBAL_VALUE_OPTIONS.has(arg)) i += 1;
  }
  return '';
}

/** What an error shows of a value: one line, cut. */
const SHOWN_VALUE = 40;

/**
 * The argument after `flag` when it reads as a value, not an option (`--prompt -urgent`,
 * `--prompt "--urgent now"`), shown on one line and cut; undefined when the value is truly
 * missing (`--events --agent none`, a bare option at the end, `--` after it) or the next
 * argument may be a mistyped option (`--events --evnets`).
 */
function dashValue(args: readonly string[], flag: string, knownOptions: readonly string[]): string | undefined {
  const end = args.indexOf('--');
  const at = args.findIndex((arg, i) => arg === flag && (end < 0 || i < end));
  const next = at >= 0 ? args[at + 1] : undefined;
  if (next === undefined || next === '--' || !next.startsWith('-')) return undefined;
  const option = next.replace(/^--?/, '').split('=')[0] ?? '';
  if (knownOptions.includes(option) || knownOptions.includes(option.replace(/^no-/, ''))) return undefined;
  if (next.startsWith('--') && !/\s/.test(next)) return undefined;
  // Cut before escaping: an escape (`\n`) is never cut in half.
  return next.length > SHOWN_VALUE ? `${escapeControl(cutText(next, SHOWN_VALUE))}…` : escapeControl(next);
}

export function explainUsageError(message: string, args: readonly string[], knownOptions: readonly string[]): string {
  const group = args.findIndex((a) => a === 'webhook' || a === 'secrets');
  const groupName = group >= 0 ? (args[group] as 'webhook' | 'secrets') : undefined;
  const command = group >= 0 ? commandAfter(args, group) : '';
  if (/^Not enough non-option arguments/.test(message)) {
    const what = POSITIONALS[args[group] === 'secrets' && command === 'delete' ? 'delete_secret' : command];
    // `show -- -lead`: the value is there, after `--`, but no name or id may start with '-'.
    const afterDashes = args.indexOf('--') >= 0 ? args[args.indexOf('--') + 1] : undefined;
    if (what && afterDashes !== undefined) return `'${afterDashes}' cannot be ${what.slice(0, what.indexOf(':'))}: names and ids start with a letter or digit, never '-'`;
    if (what) return `missing argument ${what}`;
  }
  // An option declared `requiresArg` typed bare (`--events $EVENTS` with EVENTS unset): never read as "clear it".
  const bare = /^Not enough arguments following: (.+)$/.exec(message);
  if (bare) {
    const name = bare[1] ?? '';
    const flag = name.length === 1 ? `-${name}` : `--${name}`;
    const dashed = dashValue(args, flag, knownOptions);
    // A value that starts with '-' and a letter reads as options (webhook/options.ts joins the others).
    // No address or port starts with '-': what --host and --port take is said instead.
    if (dashed !== undefined && flag === '--host') return hostRefused(dashed);
    if (dashed !== undefined && flag === '--port') return portRefused(flag, dashed);
    if (dashed !== undefined) return `${flag} needs a value: '${dashed}' reads as options; give a value that starts with '-' joined to its option: ${flag}='${dashed}'`;
    return `${flag} needs a value (none was given, as with a script's unset variable): give one, or leave the option out${command === 'update' ? ' to keep the current setting' : ''}`;
  }
  const unknown = /^Unknown arguments?: (.+)$/.exec(message);
  if (unknown) {
    const listed = (unknown[1] ?? '').split(',').map((n) => n.trim()).filter(Boolean);
    // yargs lists --foo-bar also as fooBar: one option, named once.
    const names = listed.filter((name) => !(/[A-Z]/.test(name) && listed.includes(name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`))));
    const explained = names.map((name) => {
      // A word typed without dashes is a command or an argument, not an option.
      if (args.includes(name) && !name.startsWith('-')) {
        const topLevel = args.find((a) => TOP_LEVEL.includes(a));
        if (group < 0 && !topLevel) return `unknown command '${name}': the commands are ${TOP_LEVEL.join(', ')}`;
        // `webhook bogus`: the word in the command's place names no command of the group.
        if (groupName && name === command && !GROUP_COMMANDS[groupName].includes(name)) {
          return `unknown command '${name}': the ${groupName} commands are ${GROUP_COMMANDS[groupName].join(', ')}`;
        }
        return `unexpected argument '${name}' for ${groupName ? `${groupName} ${command}` : topLevel}`;
      }
      const flag = name.length === 1 ? `-${name}` : `--${name}`;
      const guess = closest(name, knownOptions.filter((o) => o.length > 1), 3);
      return guess ? `unknown option ${flag}; did you mean --${guess}?` : `unknown option ${flag}`;
    });
    return explained.join('\n');
  }
  return message;
}

const portRefused = (option: string, typed: unknown): string => `${option} must be a whole number from 0 to 65535 (got ${JSON.stringify(typed)})`;

const hostRefused = (typed: string): string => `--host takes an IP address or a host name of this machine, such as 127.0.0.1, ::1 or 0.0.0.0 (every interface); no scheme, port or path (got ${JSON.stringify(typed)})`;

/** A TCP port given on the command line: a whole number from 0 to 65535. */
export function checkPort(value: unknown, option = '--port'): true {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 65535) {
    // As typed (`--port -`, `--port=abc`): yargs has made NaN or null of it by then.
    throw new Error(portRefused(option, typedValue(process.argv, option) ?? value));
  }
  return true;
}

/**
 * The value an option was given as typed (`--port ''`, `--port=`), the last one counting;
 * undefined when it was not given. yargs has turned an empty number into 0 by then.
 */
export function typedValue(args: readonly string[], option: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (arg === '--') break;
    if (arg === option) value = args[i + 1] ?? '';
    else if (arg.startsWith(`${option}=`)) value = arg.slice(option.length + 1);
  }
  return value;
}

/** An IP address, or a host name made of DNS labels: what serve can be told to listen on. */
const HOST_NAME = /^(?=.{1,253}\.?$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;

/**
 * serve's --port and --host. Empty (`--port "$PORT"` with PORT unset) is a usage error, as
 * for --config-dir: never port 0 (a random port no sender knows) or every interface.
 */
export function checkListenOptions(args: readonly string[], host: unknown, defaults: { port: number; host: string }): true {
  if (typedValue(args, '--port')?.trim() === '') throw new Error(`--port needs a port number (it was given empty); leave it out to use ${defaults.port}`);
  if (typeof host !== 'string') return true;
  if (host.trim() === '') throw new Error(`--host needs an address to listen on (it was given empty); leave it out to use ${defaults.host} (this machine only)`);
  return checkHost(host);
}

/** An address to listen on: an IP address or a host name, no scheme, port or path (serve and console). */
export function checkHost(host: unknown): true {
  if (typeof host === 'string' && isIP(host) === 0 && !HOST_NAME.test(host)) throw new Error(hostRefused(host));
  return true;
}
