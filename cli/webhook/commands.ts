/** `hookagent webhook …`: the subscription commands' options, checks and examples (cli/main.ts mounts them). */
import type { Argv } from 'yargs';
import { run, type Args } from '../command-run';
import { commandName } from '../invocation';
import { deadLetterCommands } from '../operations/register';
import { GROUP_COMMANDS } from '../usage-errors';
import { dryRun } from './dry-run';
import { event } from './event';
import { eventsCommand } from './follow';
import { listOption } from './options';
import { list, show } from './read';
import { requests, settingsOf, settingsOptions, REQUEST_OUTCOMES } from './requests';
import { send } from './send';
import { pause, remove, replay, resume } from './state';
import { readPayload, test } from './test';
import { usage } from './usage';
import { subscribe, update, type SubscriptionFields } from './write';

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

/** `--events ""` (or only commas): no event named. Refused rather than read as "custom endpoint only" (hunt 9 D2). */
function refuseEmptyEvents(argv: Args): true {
  if (argv.events !== undefined && listOption(argv.events)?.length === 0) {
    throw new Error("--events was given empty; name the events, or --events 'custom:*' for a subscription reached only through its custom endpoint (subscribe without --events makes one too)");
  }
  return true;
}

/**
 * Every option here takes a value (`requiresArg`): one typed bare, as `--events $EVENTS`
 * with EVENTS unset gives, is a usage error (exit 2), never a cleared setting.
 */
function subscriptionOptions(example: string) {
  return (y: Argv): Argv => y
    .example(example, '')
    .positional('name', { type: 'string', describe: 'subscription name: lower-case letters, digits, - and _', demandOption: true })
    .option('events', { type: 'string', requiresArg: true, array: true, describe: 'event types, repeated or comma-separated (pull_request, pull_request.opened, github:push, gitlab:merge_request.open, custom:alert, *); left out at subscribe, or custom:*, = only events sent to its custom endpoint' })
    .option('prompt', { type: 'string', requiresArg: true, describe: 'prompt template: {dotted.path} placeholders over the payload, {__raw__}, {{ and }} for braces' })
    .option('skills', { type: 'string', requiresArg: true, array: true, describe: 'skills to attach (built in: code-review, issue-triage, alert-triage; or {config_dir}/skills/<name>)' })
    .option('deliver', { type: 'string', requiresArg: true, array: true, describe: 'targets: codehost_comment, teamchat, messenger, log (default log)' })
    .option('description', { type: 'string', requiresArg: true, describe: 'a line saying what the subscription is for' })
    .option('channel', { type: 'string', requiresArg: true, describe: 'team chat channel for this subscription (overrides delivery.teamchat.channel)' })
    .option('chat-id', { type: 'string', requiresArg: true, describe: 'messenger chat id for this subscription (overrides delivery.messenger.chat_id)' })
    .option('max-tokens', { type: 'string', requiresArg: true, describe: "the agent reply's token limit for this subscription (overrides agent.max_tokens; none to clear)" })
    .option('daily-tokens', { type: 'string', requiresArg: true, describe: 'daily token budget of this subscription (UTC days; none to clear)' })
    .option('comment-mode', { type: 'string', requiresArg: true, describe: 'codehost_comment: sticky (one comment per pull/merge request or issue, edited in place; default for pull/merge requests) or new (one per event)' })
    .options(settingsOptions)
    .check(refuseEmptyEvents);
}

export function webhookCommands(y: Argv): Argv {
  return deadLetterCommands(y)
    .command('subscribe <name>', 'create a subscription and print the URLs and secret for the sender',
      subscriptionOptions('$0 webhook subscribe pr-review --events pull_request.opened --prompt "Review {pull_request.html_url}" --skills code-review --deliver codehost_comment'),
      run((a, ctx) => subscribe(ctx, String(a.name), fieldsOf(a))))
    .command('list', 'list subscriptions (never their secrets)', (c) => c.option('json', { type: 'boolean', describe: 'print a JSON array' })
      .example('$0 webhook list --json', ''), run((a, ctx) => list(ctx, Boolean(a.json))))
    .command('show <name>', 'show every field of a subscription', (c) => c
      .positional('name', { type: 'string', demandOption: true })
      .option('json', { type: 'boolean', describe: 'print a JSON object' })
      .option('show-secret', { type: 'boolean', describe: 'include the custom endpoint secret' })
      .example('$0 webhook show pr-review --json --show-secret', ''),
    run((a, ctx) => show(ctx, String(a.name), Boolean(a.json), Boolean(a.showSecret))))
    .command('update <name>', 'change the options given; the secret is kept',
      subscriptionOptions('$0 webhook update pr-review --events pull_request,issues --deliver codehost_comment,teamchat'),
      run((a, ctx) => update(ctx, String(a.name), fieldsOf(a))))
    .command('delete <name>', 'delete a subscription', (c) => c.positional('name', { type: 'string', demandOption: true }).example('$0 webhook delete pr-review', ''),
      run((a, ctx) => remove(ctx, String(a.name))))
    .command('pause <name>', 'hold new events of a subscription', (c) => c.positional('name', { type: 'string', demandOption: true }).example('$0 webhook pause pr-review', ''),
      run((a, ctx) => pause(ctx, String(a.name))))
    .command('resume <name>', 'release held events in arrival order and take new ones', (c) => c
      .positional('name', { type: 'string', demandOption: true })
      .option('discard-held', { type: 'boolean', describe: 'drop the held events instead of releasing them' })
      .example('$0 webhook resume pr-review --discard-held', ''),
    run((a, ctx) => resume(ctx, String(a.name), Boolean(a.discardHeld))))
    .command('test <name>', 'render the prompt against a payload, locally', (c) => c
      .positional('name', { type: 'string', demandOption: true })
      .option('payload', { type: 'string', describe: 'a JSON file, inline JSON, or - to read it from standard input' })
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
    run(async (a, ctx) => {
      const payload = a.payload as string | undefined;
      if (a.dryRun) {
        await dryRun(ctx, String(a.name), payload, a.event as string | undefined, Boolean(a.json));
      } else if (a.send) {
        await send(ctx, String(a.name), payload === undefined ? undefined : readPayload(payload), a.event as string | undefined, a.url === undefined ? undefined : String(a.url), Number(a.wait) * 1000);
      } else {
        await test(ctx, String(a.name), payload, a.event as string | undefined);
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
    run((a, ctx) => eventsCommand(ctx, String(a.name), { limit: Number(a.limit), json: Boolean(a.json), follow: Boolean(a.follow), ...(a.status ? { status: String(a.status) } : {}), ...(a.before ? { before: String(a.before) } : {}) })))
    .command('event <event-id>', 'the whole story of one event: request, filters, prompt, transcript, deliveries', (c) => c
      .positional('event-id', { type: 'string', demandOption: true })
      .option('json', { type: 'boolean', describe: 'print a JSON array (one entry per subscription)' })
      .example('$0 webhook event evt_0mws0mwck916a3c297ed36480', ''),
    run((a, ctx) => event(ctx, String(a.eventId), Boolean(a.json))))
    .command('usage [name]', 'agent tokens per subscription and model', (c) => c
      .positional('name', { type: 'string', describe: 'one subscription (default: all)' })
      .option('since', { type: 'string', default: '7d', describe: 'a duration back from now (7d, 24h, 90m) or a date (2026-11-01)' })
      .option('json', { type: 'boolean', describe: 'print a JSON object' })
      .example('$0 webhook usage pr-review --since 24h', ''),
    run((a, ctx) => usage(ctx, a.name as string | undefined, String(a.since), Boolean(a.json))))
    .command('replay <event-id>', 'queue an event again, as a new attempt (a req_… id: run a request for a subscription whose filters turned it away)', (c) => c
      .positional('event-id', { type: 'string', demandOption: true })
      .option('subscription', { type: 'string', describe: 'only for this subscription (with a req_… id: the one to run it for, when several filters turned it away)' })
      .example('$0 webhook replay evt_0mws0mwck916a3c297ed36480', '')
      .example('$0 webhook replay req_0mws0mwck00005f3a9b1c2 --subscription ready-prs', 'after changing the filters of ready-prs'),
    run((a, ctx) => replay(ctx, String(a.eventId), a.subscription as string | undefined)))
    .command('requests', 'the request log: every inbound request, its outcome and why each subscription took it or not (7 days)', (c) => c
      .option('endpoint', { type: 'string', describe: 'github, gitlab, custom/<name>, custom/? (custom names that are not the name of a subscription), or unknown (requests to other paths)' })
      .option('outcome', { type: 'string', choices: REQUEST_OUTCOMES, describe: 'only this outcome' })
      .option('limit', { type: 'number', default: 20, describe: 'how many, newest first' })
      .option('json', { type: 'boolean', describe: 'print a JSON array' })
      .check((a) => {
        if (!Number.isInteger(a.limit) || (a.limit as number) < 1 || (a.limit as number) > 1000) throw new Error('--limit must be a whole number from 1 to 1000');
        if (a.endpoint !== undefined && !/^(github|gitlab|unknown|custom\/\?|custom\/[a-z0-9][a-z0-9_-]{0,62})$/.test(String(a.endpoint))) throw new Error('--endpoint must be github, gitlab, custom/<name>, custom/? (custom names that are not the name of a subscription) or unknown (other paths)');
        return true;
      })
      .example('$0 webhook requests --outcome filtered --limit 5', '')
      .example('$0 webhook requests --endpoint custom/alerts --json', ''),
    run((a, ctx) => requests(ctx, { endpoint: a.endpoint as string | undefined, outcome: a.outcome as string | undefined, limit: Number(a.limit) }, Boolean(a.json))))
    .example('$0 webhook list', '')
    .demandCommand(1, `Name a webhook command: ${GROUP_COMMANDS.webhook.join(', ')}`);
}

