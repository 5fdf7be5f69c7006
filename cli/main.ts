/**
 * `hookagent`: manage subscriptions (`webhook …`), a deployment's secrets (`secrets …`) and run
 * the service locally (`serve`).
 * Exit codes: 0 success, 1 a refused operation (the message says which and what to do),
 * 2 a usage error. Results on stdout, errors on stderr, nothing else.
 */
import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { configDir as resolveConfigDir } from '../functions/core/config/file';
import { createContext, type GlobalOptions } from './context';
import { serve } from './local/serve';
import { checkTrustedProxies } from './local/forwarded';
import { joinSignedValues, listOption } from './webhook/options';
import { GROUP_COMMANDS, checkPort, explainUsageError } from './usage-errors';
import { list, show } from './webhook/read';
import { pause, remove, replay, resume } from './webhook/state';
import { send } from './webhook/send';
import { requests, settingsOf, settingsOptions, REQUEST_OUTCOMES } from './webhook/requests';
import { readSecretFile } from './secret-file';
import { listSecrets, readSecretValue, setSecret } from './secrets';
import { readPayload, test } from './webhook/test';
import { subscribe, update, type SubscriptionFields } from './webhook/write';
import { prepareCompletion } from './completion';
import { asInvoked, commandName } from './invocation';
import { consoleCommand } from './console/cli';
import { formatError } from './hints';
import { eventsCommand } from './webhook/follow';
import { version } from '../package.json';
import { usage } from './webhook/usage';
import { event } from './webhook/event';
import { isRequestId, refuseRequestReplay } from './webhook/request-entry';
import { dryRun } from './webhook/dry-run';
import { deadLetterCommands, secretsDeleteCommand, statusCommand } from './operations/register';
import { endQuietlyWhenReaderLeaves } from './closed-output';

// The SDK's notice about future Node versions is not the user's concern on every command.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

type Args = GlobalOptions & Record<string, unknown>;

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

function fieldsOf(argv: Args): SubscriptionFields {
  const fields: SubscriptionFields = {};
  const events = listOption(argv.events);
  const skills = listOption(argv.skills);
  const deliver = listOption(argv.deliver);
  if (events) fields.events = events;
  if (skills) fields.skills = skills;
  if (deliver) fields.deliver = deliver;
  if (typeof argv.prompt === 'string') fields.prompt = argv.prompt;
  if (typeof argv.description === 'string') fields.description = argv.description;
  if (typeof argv.channel === 'string') fields.channel = argv.channel;
  if (argv.chatId !== undefined) fields.chatId = String(argv.chatId);
  if (argv.maxTokens !== undefined) fields.maxTokens = String(argv.maxTokens);
  if (argv.dailyTokens !== undefined) fields.dailyTokens = String(argv.dailyTokens);
  fields.settings = settingsOf(argv);
  if (argv.commentMode !== undefined) fields.commentMode = String(argv.commentMode);
  return fields;
}

function subscriptionOptions(example: string) {
  return (y: Argv): Argv => y
    .example(example, '')
    .positional('name', { type: 'string', describe: 'subscription name: lower-case letters, digits, - and _', demandOption: true })
    .option('events', { type: 'string', array: true, describe: 'event types, repeated or comma-separated (pull_request, pull_request.opened, github:push, gitlab:merge_request.open, custom:alert, *); none = only events sent to its custom endpoint' })
    .option('prompt', { type: 'string', describe: 'prompt template: {dotted.path} placeholders over the payload, {__raw__}, {{ and }} for braces' })
    .option('skills', { type: 'string', array: true, describe: 'skills to attach (built in: code-review, issue-triage, alert-triage; or {config_dir}/skills/<name>)' })
    .option('deliver', { type: 'string', array: true, describe: 'targets: codehost_comment, teamchat, messenger, log (default log)' })
    .option('description', { type: 'string', describe: 'a line saying what the subscription is for' })
    .option('channel', { type: 'string', describe: 'team chat channel for this subscription (overrides delivery.teamchat.channel)' })
    .option('chat-id', { type: 'string', describe: 'messenger chat id for this subscription (overrides delivery.messenger.chat_id)' })
    .option('max-tokens', { type: 'string', describe: "the agent reply's token limit for this subscription (overrides agent.max_tokens; none to clear)" })
    .option('daily-tokens', { type: 'string', describe: 'daily token budget of this subscription (UTC days; none to clear)' })
    .option('comment-mode', { type: 'string', describe: 'codehost_comment: sticky (one comment per pull/merge request or issue, edited in place; default for pull/merge requests) or new (one per event)' })
    .options(settingsOptions);
}

/** Runs a command body; HookErrors become exit 1 with their message. */
function run(body: (argv: Args) => Promise<void>) {
  return async (argv: Args): Promise<void> => {
    try {
      const ctx = createContext(argv);
      await body.call(undefined, { ...argv, ctx } as Args);
    } catch (error) {
      process.stderr.write(formatError(error));
      process.exitCode = 1;
    }
  };
}

const ctxOf = (argv: Args) => argv.ctx as ReturnType<typeof createContext>;

function webhookCommands(y: Argv): Argv {
  return deadLetterCommands(y)
    .command('subscribe <name>', 'create a subscription and print the URLs and secret for the sender',
      subscriptionOptions('$0 webhook subscribe pr-review --events pull_request.opened --prompt "Review {pull_request.html_url}" --skills code-review --deliver codehost_comment'),
      run((a) => subscribe(ctxOf(a), String(a.name), fieldsOf(a))))
    .command('list', 'list subscriptions (never their secrets)', (c) => c.option('json', { type: 'boolean', describe: 'print a JSON array' })
      .example('$0 webhook list --json', ''), run((a) => list(ctxOf(a), Boolean(a.json))))
    .command('show <name>', 'show every field of a subscription', (c) => c
      .positional('name', { type: 'string', demandOption: true })
      .option('json', { type: 'boolean', describe: 'print a JSON object' })
      .option('show-secret', { type: 'boolean', describe: 'include the custom endpoint secret' })
      .example('$0 webhook show pr-review --json --show-secret', ''),
    run((a) => show(ctxOf(a), String(a.name), Boolean(a.json), Boolean(a.showSecret))))
    .command('update <name>', 'change the options given; the secret is kept',
      subscriptionOptions('$0 webhook update pr-review --events pull_request,issues --deliver codehost_comment,teamchat'),
      run((a) => update(ctxOf(a), String(a.name), fieldsOf(a))))
    .command('delete <name>', 'delete a subscription', (c) => c.positional('name', { type: 'string', demandOption: true }).example('$0 webhook delete pr-review', ''),
      run((a) => remove(ctxOf(a), String(a.name))))
    .command('pause <name>', 'hold new events of a subscription', (c) => c.positional('name', { type: 'string', demandOption: true }).example('$0 webhook pause pr-review', ''),
      run((a) => pause(ctxOf(a), String(a.name))))
    .command('resume <name>', 'release held events in arrival order and take new ones', (c) => c
      .positional('name', { type: 'string', demandOption: true })
      .option('discard-held', { type: 'boolean', describe: 'drop the held events instead of releasing them' })
      .example('$0 webhook resume pr-review --discard-held', ''),
    run((a) => resume(ctxOf(a), String(a.name), Boolean(a.discardHeld))))
    .command('test <name>', 'render the prompt against a payload, locally', (c) => c
      .positional('name', { type: 'string', demandOption: true })
      .option('payload', { type: 'string', describe: 'a JSON file, or inline JSON' })
      .option('event', { type: 'string', describe: 'the event type, for prompts that use it' })
      .option('send', { type: 'boolean', describe: 'post a signed sample event to the running service and print the outcome' })
      .option('url', { type: 'string', describe: 'with --send: where the service listens (default: the serve running for this config dir)' })
      .option('wait', { type: 'number', default: 30, describe: 'with --send: seconds to wait for the outcome' })
      .option('dry-run', { type: 'boolean', describe: 'run the real agent (provider, skills, tools) on the payload and print reply and transcript; nothing is delivered' })
      .option('json', { type: 'boolean', describe: 'with --dry-run: print a JSON object' })
      .conflicts('dry-run', 'send')
      .check((a) => {
        const wait = a.wait as number;
        if (!Number.isFinite(wait) || wait < 0 || wait > 3600) throw new Error(`--wait must be a number of seconds from 0 to 3600 (got ${JSON.stringify(process.argv[process.argv.indexOf('--wait') + 1] ?? wait)})`);
        if (a.url !== undefined && !/^https?:\/\/[^/\s]+/i.test(String(a.url))) throw new Error(`--url must be an http:// or https:// URL, such as http://127.0.0.1:8644 (got ${JSON.stringify(a.url)})`);
        return true;
      })
      .example('$0 webhook test pr-review --dry-run --payload pr.json', '')
      .example('$0 webhook test pr-review --payload pr.json --event pull_request', '')
      .example('$0 webhook test pr-review --send', ''),
    run(async (a) => {
      const payload = a.payload as string | undefined;
      if (a.dryRun) {
        await dryRun(ctxOf(a), String(a.name), payload, a.event as string | undefined, Boolean(a.json));
      } else if (a.send) {
        await send(ctxOf(a), String(a.name), payload === undefined ? undefined : readPayload(payload), a.event as string | undefined, a.url === undefined ? undefined : String(a.url), Number(a.wait) * 1000);
      } else {
        await test(ctxOf(a), String(a.name), payload, a.event as string | undefined);
      }
    }))
    .command('events <name>', 'recent events of a subscription and their outcome', (c) => c
      .positional('name', { type: 'string', demandOption: true })
      .option('limit', { type: 'number', default: 20, describe: 'how many, newest first' })
      .option('json', { type: 'boolean', describe: 'print a JSON array (with --follow: one JSON object per line)' })
      .option('before', { type: 'string', describe: 'only events older than this event id (the next page)' })
      .option('status', { type: 'string', choices: ['held', 'queued', 'processing', 'delivered', 'suppressed', 'failed', 'superseded', 'rate_limited', 'over_budget', 'abandoned', 'filtered'], describe: 'only events in this status (filtered: requests its payload filters turned away)' })
      .option('follow', { alias: 'f', type: 'boolean', describe: 'keep running and print new events and status changes as they happen' })
      .check((a) => {
        if (!Number.isInteger(a.limit) || (a.limit as number) < 1 || (a.limit as number) > 1000) throw new Error('--limit must be a whole number from 1 to 1000');
        if (a.follow && a.status === 'filtered') throw new Error(`--follow does not follow --status filtered (requests turned away are in the request log): use ${commandName()} webhook requests --outcome filtered`);
        return true;
      })
      .example('$0 webhook events pr-review --limit 5', '')
      .example('$0 webhook events pr-review --limit 1000 --before evt_0mws0mwck916a3c297ed36480', 'the next page')
      .example('$0 webhook events pr-review --follow --status failed', 'stream new failures'),
    run((a) => eventsCommand(ctxOf(a), String(a.name), { limit: Number(a.limit), json: Boolean(a.json), follow: Boolean(a.follow), ...(a.status ? { status: String(a.status) } : {}), ...(a.before ? { before: String(a.before) } : {}) })))
    .command('event <event-id>', 'the whole story of one event: request, filters, prompt, transcript, deliveries', (c) => c
      .positional('event-id', { type: 'string', demandOption: true })
      .option('json', { type: 'boolean', describe: 'print a JSON array (one entry per subscription)' })
      .example('$0 webhook event evt_0mws0mwck916a3c297ed36480', ''),
    run((a) => event(ctxOf(a), String(a.eventId), Boolean(a.json))))
    .command('usage [name]', 'agent tokens per subscription and model', (c) => c
      .positional('name', { type: 'string', describe: 'one subscription (default: all)' })
      .option('since', { type: 'string', default: '7d', describe: 'a duration back from now (7d, 24h, 90m) or a date (2026-11-01)' })
      .option('json', { type: 'boolean', describe: 'print a JSON object' })
      .example('$0 webhook usage pr-review --since 24h', ''),
    run((a) => usage(ctxOf(a), a.name as string | undefined, String(a.since), Boolean(a.json))))
    .command('replay <event-id>', 'queue an event again, as a new attempt', (c) => c
      .positional('event-id', { type: 'string', demandOption: true })
      .option('subscription', { type: 'string', describe: 'only for this subscription' })
      .example('$0 webhook replay evt_0mws0mwck916a3c297ed36480', ''),
    run((a) => {
      if (isRequestId(String(a.eventId))) throw refuseRequestReplay(String(a.eventId));
      return replay(ctxOf(a), String(a.eventId), a.subscription as string | undefined);
    }))
    .command('requests', 'the request log: every inbound request, its outcome and why each subscription took it or not (7 days)', (c) => c
      .option('endpoint', { type: 'string', describe: 'github, gitlab, custom/<name>, or unknown (requests to other paths)' })
      .option('outcome', { type: 'string', choices: REQUEST_OUTCOMES, describe: 'only this outcome' })
      .option('limit', { type: 'number', default: 20, describe: 'how many, newest first' })
      .option('json', { type: 'boolean', describe: 'print a JSON array' })
      .check((a) => {
        if (!Number.isInteger(a.limit) || (a.limit as number) < 1 || (a.limit as number) > 1000) throw new Error('--limit must be a whole number from 1 to 1000');
        if (a.endpoint !== undefined && !/^(github|gitlab|unknown|custom\/\?|custom\/[a-z0-9][a-z0-9_-]{0,62})$/.test(String(a.endpoint))) throw new Error('--endpoint must be github, gitlab, custom/<name>, custom/? (custom names that are not valid subscription names) or unknown (other paths)');
        return true;
      })
      .example('$0 webhook requests --outcome filtered --limit 5', '')
      .example('$0 webhook requests --endpoint custom/alerts --json', ''),
    run((a) => requests(ctxOf(a), { endpoint: a.endpoint as string | undefined, outcome: a.outcome as string | undefined, limit: Number(a.limit) }, Boolean(a.json))))
    .example('$0 webhook list', '')
    .demandCommand(1, `Name a webhook command: ${GROUP_COMMANDS.webhook.join(', ')}`);
}

function secretsCommands(y: Argv): Argv {
  return secretsDeleteCommand(y)
    .command('set <name>', 'store a secret as the SSM SecureString /hookagent/<stage>/<name> (value from stdin or a hidden prompt)', (c) => c
      .positional('name', { type: 'string', demandOption: true, describe: 'the variable config.yaml references as ${NAME}' })
      .example('$0 secrets set GITHUB_WEBHOOK_SECRET --stage prod', 'prompts for the value without echo')
      .example('printf %s "$TOKEN" | $0 secrets set GITHUB_TOKEN --stage prod', 'reads it from stdin')
      .example('$0 secrets set GITHUB_APP_PRIVATE_KEY --file my-app.private-key.pem --stage prod', 'reads a file (a GitHub App private key)')
      .option('file', { type: 'string', describe: 'read the value from this file (e.g. a GitHub App .pem private key)' }),
    run(async (a) => setSecret(ctxOf(a), a, String(a.name), (prompt) => (typeof a.file === 'string' ? Promise.resolve(readSecretFile(a.file)) : readSecretValue(prompt)))))
    .command('list', 'names of the secrets stored for the stage (never their values)', (c) => c
      .option('json', { type: 'boolean', describe: 'print a JSON array' }).example('$0 secrets list --stage prod', ''),
    run(async (a) => listSecrets(ctxOf(a), a, Boolean(a.json))))
    .example('$0 secrets list --stage prod', '')
    .demandCommand(1, 'Name a secrets command: set, list or delete');
}

export async function main(args: string[]): Promise<void> {
  endQuietlyWhenReaderLeaves();
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
      .option('port', { type: 'number', default: 8644, describe: 'port to listen on' })
      .option('host', { type: 'string', default: '127.0.0.1', describe: 'address to listen on' })
      .option('trust-proxy', { type: 'boolean', default: false, describe: 'take the source address from X-Forwarded-For (only behind a proxy you run): the entry your proxy appended, the rightmost' })
      .option('trusted-proxies', { type: 'number', describe: 'with proxies chained in front of serve: how many (the client is the Nth X-Forwarded-For entry from the right); implies --trust-proxy', coerce: (n: unknown) => { if (checkTrustedProxies(n) === undefined) throw new Error('--trusted-proxies takes a whole number from 1 to 32'); return Number(n); } })
      .option('log-format', { choices: ['text', 'json'] as const, default: 'text' as const, describe: 'logs for a person, or JSON lines' })
      .check((a) => checkPort(a.port))
      .option('shutdown-grace', { type: 'number', default: 10, describe: 'seconds SIGINT/SIGTERM waits for in-flight work before returning it to the queue' })
      .example('$0 serve --port 8644', ''),
    async (a) => {
      try {
        await serve({
          configDir: resolveConfigDir(a.configDir as string | undefined), port: Number(a.port), host: String(a.host),
          trustProxy: a.trustedProxies ?? Boolean(a.trustProxy), logFormat: a.logFormat === 'json' ? 'json' : 'text',
          graceMs: (Number.isFinite(Number(a.shutdownGrace)) ? Math.max(0, Number(a.shutdownGrace)) : 10) * 1000,
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
