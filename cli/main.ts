/**
 * `hookagent`: manage subscriptions (`webhook …`), a deployment's secrets (`secrets …`) and run
 * the service locally (`serve`).
 * Exit codes: 0 success, 1 a refused operation (the message says which and what to do),
 * 2 a usage error. Results on stdout, errors on stderr, nothing else.
 */
import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { HookError } from '../functions/core/errors';
import { configDir as resolveConfigDir } from '../functions/core/config/file';
import { createContext, type GlobalOptions } from './context';
import { serve } from './local/serve';
import { listOption } from './webhook/options';
import { events, list, show } from './webhook/read';
import { pause, remove, replay, resume } from './webhook/state';
import { send } from './webhook/send';
import { listSecrets, readSecretValue, setSecret } from './secrets';
import { readPayload, test } from './webhook/test';
import { subscribe, update, type SubscriptionFields } from './webhook/write';
import { deadLetterCommands, secretsDeleteCommand, statusCommand } from './operations/register';

// The SDK's notice about future Node versions is not the user's concern on every command.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

type Args = GlobalOptions & Record<string, unknown>;

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
  return fields;
}

function subscriptionOptions(example: string) {
  return (y: Argv): Argv => y
    .example(example, '')
    .positional('name', { type: 'string', describe: 'subscription name: lower-case letters, digits, - and _', demandOption: true })
    .option('events', { type: 'string', array: true, describe: 'event types, repeated or comma-separated (pull_request, pull_request.opened, merge_request, …); none = every event' })
    .option('prompt', { type: 'string', describe: 'prompt template: {dotted.path} placeholders over the payload, {__raw__}, {{ and }} for braces' })
    .option('skills', { type: 'string', array: true, describe: 'skills to attach (built in: code-review, issue-triage, alert-triage; or {config_dir}/skills/<name>)' })
    .option('deliver', { type: 'string', array: true, describe: 'targets: codehost_comment, teamchat, messenger, log (default log)' })
    .option('description', { type: 'string', describe: 'a line saying what the subscription is for' })
    .option('channel', { type: 'string', describe: 'team chat channel for this subscription (overrides delivery.teamchat.channel)' })
    .option('chat-id', { type: 'string', describe: 'messenger chat id for this subscription (overrides delivery.messenger.chat_id)' });
}

/** Runs a command body; HookErrors become exit 1 with their message. */
function run(body: (argv: Args) => Promise<void>) {
  return async (argv: Args): Promise<void> => {
    try {
      const ctx = createContext(argv);
      await body.call(undefined, { ...argv, ctx } as Args);
    } catch (error) {
      process.stderr.write(`error: ${error instanceof HookError || error instanceof Error ? error.message : String(error)}\n`);
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
      .option('url', { type: 'string', default: 'http://127.0.0.1:8644', describe: 'with --send: where the service listens' })
      .option('wait', { type: 'number', default: 30, describe: 'with --send: seconds to wait for the outcome' })
      .example('$0 webhook test pr-review --payload pr.json --event pull_request', '')
      .example('$0 webhook test pr-review --send', ''),
    run(async (a) => {
      const payload = a.payload as string | undefined;
      if (a.send) {
        await send(ctxOf(a), String(a.name), payload === undefined ? undefined : readPayload(payload), a.event as string | undefined, String(a.url).replace(/\/+$/, ''), Number(a.wait) * 1000);
      } else {
        await test(ctxOf(a), String(a.name), payload, a.event as string | undefined);
      }
    }))
    .command('events <name>', 'recent events of a subscription and their outcome', (c) => c
      .positional('name', { type: 'string', demandOption: true })
      .option('limit', { type: 'number', default: 20, describe: 'how many, newest first' })
      .option('json', { type: 'boolean', describe: 'print a JSON array' })
      .check((a) => {
        if (!Number.isInteger(a.limit) || (a.limit as number) < 1 || (a.limit as number) > 1000) throw new Error('--limit must be a whole number from 1 to 1000');
        return true;
      })
      .example('$0 webhook events pr-review --limit 5', ''),
    run((a) => events(ctxOf(a), String(a.name), Number(a.limit), Boolean(a.json))))
    .command('replay <event-id>', 'queue an event again, as a new attempt', (c) => c
      .positional('event-id', { type: 'string', demandOption: true })
      .option('subscription', { type: 'string', describe: 'only for this subscription' })
      .example('$0 webhook replay evt_0mws0mwck916a3c297ed36480', ''),
    run((a) => replay(ctxOf(a), String(a.eventId), a.subscription as string | undefined)))
    .demandCommand(1, 'Name a webhook command: subscribe, list, show, update, delete, pause, resume, test, events, replay, dead-letters, redrive');
}

function secretsCommands(y: Argv): Argv {
  return secretsDeleteCommand(y)
    .command('set <name>', 'store a secret as the SSM SecureString /hookagent/<stage>/<name> (value from stdin or a hidden prompt)', (c) => c
      .positional('name', { type: 'string', demandOption: true, describe: 'the variable config.yaml references as ${NAME}' })
      .example('$0 secrets set GITHUB_WEBHOOK_SECRET --stage prod', 'prompts for the value without echo')
      .example('printf %s "$TOKEN" | $0 secrets set GITHUB_TOKEN --stage prod', 'reads it from stdin'),
    run(async (a) => setSecret(ctxOf(a), a, String(a.name), (prompt) => readSecretValue(prompt))))
    .command('list', 'names of the secrets stored for the stage (never their values)', (c) => c
      .option('json', { type: 'boolean', describe: 'print a JSON array' }).example('$0 secrets list --stage prod', ''),
    run(async (a) => listSecrets(ctxOf(a), a, Boolean(a.json))))
    .demandCommand(1, 'Name a secrets command: set, list or delete');
}

export async function main(args: string[]): Promise<void> {
  await statusCommand(yargs(args))
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
      .option('trust-proxy', { type: 'boolean', default: false, describe: 'take the source address from X-Forwarded-For (only behind a proxy you run)' })
      .option('log-format', { choices: ['text', 'json'] as const, default: 'text' as const, describe: 'logs for a person, or JSON lines' })
      .example('$0 serve --port 8644', ''),
    async (a) => {
      try {
        await serve({
          configDir: resolveConfigDir(a.configDir as string | undefined), port: Number(a.port), host: String(a.host),
          trustProxy: Boolean(a.trustProxy), logFormat: a.logFormat === 'json' ? 'json' : 'text',
        });
        process.exit(0);
      } catch (error) {
        process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
        process.exit(1);
      }
    })
    .demandCommand(1, 'Name a command: webhook, secrets, status or serve')
    .strict()
    .recommendCommands()
    .help()
    .alias('help', 'h')
    .version(false)
    .wrap(Math.min(110, process.stdout.columns || 110))
    .fail((message, error) => {
      process.stderr.write(`error: ${message ?? error?.message}\nRun with --help for usage.\n`);
      process.exit(2);
    })
    .parseAsync();
}

void main(hideBin(process.argv));
