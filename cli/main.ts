/**
 * `hookagent`: manage subscriptions (`webhook …`), a deployment's secrets (`secrets …`) and run
 * the service locally (`serve`).
 * Exit codes: 0 success, 1 a refused operation (the message says which and what to do),
 * 2 a usage error. Results on stdout, errors on stderr, nothing else.
 */
import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { configDir as resolveConfigDir } from '../functions/core/config/file';
import { run } from './command-run';
import { checkTrustedProxies } from './local/forwarded';
import { joinSignedValues } from './webhook/options';
import { checkListenOptions, checkPort, explainUsageError } from './usage-errors';
import { readSecretFile } from './secret-file';
import { listSecrets, readSecretValue, setSecret } from './secrets';
import { completionHelp, prepareCompletion } from './completion';
import { asInvoked } from './invocation';
import { consoleCommand } from './console/cli';
import { formatError } from './hints';
import { version } from '../package.json';
import { secretsDeleteCommand, statusCommand } from './operations/register';
import { webhookCommands } from './webhook/commands';
import { endQuietlyWhenReaderLeaves } from './closed-output';

// The SDK's notice about future Node versions is not the user's concern on every command.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** Where serve listens unless told: this machine only. */
const SERVE_LISTEN = { port: 8644, host: '127.0.0.1' };

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

function secretsCommands(y: Argv): Argv {
  return secretsDeleteCommand(y)
    .command('set <name>', 'store a secret as the SSM SecureString /hookagent/<stage>/<name> (value from stdin or a hidden prompt)', (c) => c
      .positional('name', { type: 'string', demandOption: true, describe: 'the variable config.yaml references as ${NAME}' })
      .example('$0 secrets set GITHUB_WEBHOOK_SECRET --stage prod', 'prompts for the value without echo')
      .example('printf %s "$TOKEN" | $0 secrets set GITHUB_TOKEN --stage prod', 'reads it from stdin')
      .example('$0 secrets set GITHUB_APP_PRIVATE_KEY --file my-app.private-key.pem --stage prod', 'reads a file (a GitHub App private key)')
      .option('file', { type: 'string', describe: 'read the value from this file (e.g. a GitHub App .pem private key)' }),
    run(async (a, ctx) => setSecret(ctx, a, String(a.name), (prompt) => (typeof a.file === 'string' ? Promise.resolve(readSecretFile(a.file)) : readSecretValue(prompt)))))
    .command('list', 'names of the secrets stored for the stage (never their values)', (c) => c
      .option('json', { type: 'boolean', describe: 'print a JSON array' }).example('$0 secrets list --stage prod', ''),
    run(async (a, ctx) => listSecrets(ctx, a, Boolean(a.json))))
    .example('$0 secrets list --stage prod', '')
    .demandCommand(1, 'Name a secrets command: set, list or delete');
}

export async function main(args: string[]): Promise<void> {
  endQuietlyWhenReaderLeaves();
  const help = completionHelp(args);
  if (help !== undefined) {
    process.stdout.write(help);
    return;
  }
  let prepared: string[];
  try {
    prepared = joinSignedValues(prepareCompletion(args));
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\n`);
    process.exit(2);
  }
  const cli = statusCommand(yargs(prepared));
  await cli
    .scriptName('hookagent')
    .usage('$0 <command> [options]')
    .option('config-dir', { type: 'string', describe: 'configuration directory (default $HOOKAGENT_CONFIG_DIR, else ~/.hookagent)', global: true })
    .option('stage', { type: 'string', describe: 'act on the AWS deployment of this stage (default: aws.stage in config.yaml)', global: true })
    .option('region', { type: 'string', describe: 'AWS region of that deployment', global: true })
    .command('webhook', 'manage webhook subscriptions', webhookCommands)
    .command('secrets', "manage a deployment's secrets in SSM Parameter Store", secretsCommands)
    .command('serve', 'run the whole service on this machine', (c) => c
      // requiresArg: a bare --host/--port is an error, never the default in silence; `--host -` is its (refused) value.
      .option('port', { type: 'number', default: SERVE_LISTEN.port, requiresArg: true, describe: 'port to listen on' })
      .option('host', { type: 'string', default: SERVE_LISTEN.host, requiresArg: true, describe: 'address to listen on' })
      .option('trust-proxy', { type: 'boolean', default: false, describe: 'take the source address from X-Forwarded-For (only behind a proxy you run): the entry your proxy appended, the rightmost' })
      .option('trusted-proxies', { type: 'number', describe: 'with proxies chained in front of serve: how many (the client is the Nth X-Forwarded-For entry from the right); implies --trust-proxy', coerce: (n: unknown) => { if (checkTrustedProxies(n) === undefined) throw new Error('--trusted-proxies takes a whole number from 1 to 32'); return Number(n); } })
      .option('log-format', { choices: ['text', 'json'] as const, default: 'text' as const, describe: 'logs for a person, or JSON lines' })
      .check((a) => checkListenOptions(prepared, a.host, SERVE_LISTEN) && checkPort(a.port))
      // serve is the local service: a deployment's --stage/--region would be silently ignored.
      .check((a) => {
        if (a.stage !== undefined || a.region !== undefined) throw new Error('serve runs the whole service on this machine, from the local store; --stage and --region pick an AWS deployment for the other commands');
        return true;
      })
      .option('shutdown-grace', { type: 'number', default: 10, describe: 'seconds SIGINT/SIGTERM waits for in-flight work before returning it to the queue' })
      .check((a) => {
        const grace = a.shutdownGrace as number;
        if (!Number.isFinite(grace) || grace < 0 || grace > 3600) throw new Error(`--shutdown-grace must be a number of seconds from 0 to 3600 (got ${JSON.stringify(process.argv[process.argv.indexOf('--shutdown-grace') + 1] ?? grace)})`);
        return true;
      })
      .example('$0 serve --port 8644', ''),
    async (a) => {
      try {
        // Loaded for this command only: the HTTP server, worker and agents are not what the other commands need at start-up.
        const { serve } = await import('./local/serve');
        await serve({
          configDir: resolveConfigDir(a.configDir as string | undefined), port: Number(a.port), host: String(a.host),
          trustProxy: a.trustedProxies ?? Boolean(a.trustProxy), logFormat: a.logFormat === 'json' ? 'json' : 'text',
          graceMs: Number(a.shutdownGrace) * 1000,
        });
        process.exit(0);
      } catch (error) {
        process.stderr.write(formatError(error));
        process.exit(1);
      }
    })
    .command(consoleCommand)
    .completion('completion', 'print a shell completion script: hookagent completion [bash|zsh] >> ~/.bashrc (or ~/.zshrc)')
    .example('$0 webhook subscribe pr-review --events pull_request.opened --skills code-review --deliver codehost_comment', '')
    .example('$0 console', 'the event console in the browser')
    .demandCommand(1, 'Name a command: webhook, secrets, status, serve or console')
    .strict()
    // An option that takes one value, given twice: yargs makes an array of it, which no command reads as a value.
    .check((argv) => {
      const arrays = new Set((cli as unknown as { getOptions(): { array: string[] } }).getOptions().array);
      const repeated = Object.keys(argv).find((key) => key !== '_' && !key.includes('-') && Array.isArray(argv[key]) && !arrays.has(key) && !arrays.has(kebab(key)));
      if (repeated) throw new Error(`--${kebab(repeated)} was given ${(argv[repeated] as unknown[]).length} times; it takes one value: give it once`);
      // `--config-dir "$DIR"` with DIR unset must not fall back to ~/.hookagent: a script's `delete` would hit the real store.
      if (typeof argv.configDir === 'string' && argv.configDir.trim() === '') throw new Error('--config-dir needs a directory (it was given empty); leave it out to use $HOOKAGENT_CONFIG_DIR, else ~/.hookagent');
      return true;
    })
    .recommendCommands()
    .help()
    .alias('help', 'h')
    .version(version)
    .wrap(Math.min(110, process.stdout.columns || 110))
    .fail((message, error) => {
      const known = Object.keys((cli as unknown as { getOptions(): { key: Record<string, unknown> } }).getOptions().key);
      const text = message ? explainUsageError(message, args, known) : error?.message;
      process.stderr.write(asInvoked(`error: ${text}\nRun with --help for usage and an example.\n`));
      process.exit(2);
    })
    .parseAsync();
}

void main(hideBin(process.argv));
