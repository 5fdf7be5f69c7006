/**
 * Load through `hookagent serve`, as a sender sees it: a few thousand signed GitHub events
 * (~20 KB each), a known share of them invalid, at fixed concurrency. At the end the books
 * must balance: accepted = delivered + suppressed + dead-lettered (every one in the event
 * log, with its reason), rejected = the invalid ones, and no comment posted twice. Then the
 * same with `kill -9` of the server in the middle and a restart; requests the dead server
 * never answered are sent again with the same delivery id, as GitHub's redelivery does.
 *
 * Slow (about a minute each): run with `npm run test:reliability`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import githubExamples from '@octokit/webhooks-examples';
import { signHub } from '../../functions/core/auth/signatures';
import { buildCli, runCli } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';
import { Tally } from './tally';

const GH_SECRET = 'load-github-secret';
const env = { GH_SECRET, GITHUB_TOKEN: 'ghp_load' };
const CONCURRENCY = 10;
/** Per run: 800 reviews delivered, 400 doomed (GitHub answers 404), 800 suppressed, 400 invalid. */
const SHARES = { reviews: 800, doomed: 400, quiet: 800, invalid: 400 } as const;
const DOOMED_FROM = 90_000;
const tally = new Tally('load');

type Kind = keyof typeof SHARES;
interface Sent {
  kind: Kind;
  deliveryId: string;
  event: string;
  body: string;
  headers: Record<string, string>;
  /** The final answer; undefined while unanswered (connection refused or reset). */
  answer?: { status: number; body: Record<string, unknown> };
}
interface LogEntry {
  event_id: string;
  subscription: string;
  delivery_id: string;
  status: string;
  error?: { code: string; message: string };
}

let github: LocalServer;
const comments = new Map<string, string[]>();

const examples = githubExamples.find((g) => g.name === 'pull_request')!.examples as Array<Record<string, unknown>>;
const prExample = examples.find((e) => e.action === 'opened')!;
const issueExample = githubExamples.find((g) => g.name === 'issues')!.examples.find((e) => (e as { action?: string }).action === 'opened') as Record<string, unknown>;

beforeAll(async () => {
  buildCli();
  // GitHub's comments API: PRs numbered from DOOMED_FROM do not exist (404, a final failure).
  github = await startLocalServer((req, res) => {
    const path = req.url.split('?')[0] as string;
    // Who the token is (the comments below are its own): markers count only in the bot's comments.
    if (path === '/user') return sendJson(res, 200, { id: 4242, login: 'hookagent-bot', type: 'User' });
    const number = Number(/\/issues\/(\d+)\/comments$/.exec(path)?.[1]);
    if (!(number > 0) || number >= DOOMED_FROM) return sendJson(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    const posted = comments.get(path) ?? [];
    if (req.method === 'GET') return sendJson(res, 200, posted.map((body) => ({ body, html_url: 'https://github.test/c', user: { id: 4242, login: 'hookagent-bot', type: 'User' } })));
    posted.push((JSON.parse(req.body) as { body: string }).body);
    comments.set(path, posted);
    sendJson(res, 201, { id: posted.length, html_url: `https://github.test${path}/${posted.length}` });
  });
}, 120_000);

afterAll(async () => {
  tally.flush();
  await github.close();
});

async function configured(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-load-'));
  writeFileSync(join(dir, 'config.yaml'), [
    'webhooks: { github: { secret: ${GH_SECRET} } }',
    `delivery: { timeout: 5s, codehost: { github: { token: \${GITHUB_TOKEN}, api_url: "${github.url}" } } }`,
  ].join('\n'));
  for (const args of [
    ['reviews', '--events', 'pull_request.opened', '--prompt', 'Review of #{pull_request.number}', '--deliver', 'codehost_comment'],
    ['doomed', '--events', 'pull_request.closed', '--prompt', 'Closed #{pull_request.number}', '--deliver', 'codehost_comment'],
    ['quiet', '--events', 'issues', '--prompt', '[SILENT]', '--deliver', 'codehost_comment'],
  ]) {
    const created = await runCli(['--config-dir', dir, 'webhook', 'subscribe', ...args], env);
    expect(created.code).toBe(0);
  }
  return dir;
}

/** The run's requests, kinds interleaved so a kill lands among all of them. */
function requests(run: string): Sent[] {
  const kinds = (Object.keys(SHARES) as Kind[]).flatMap((kind) => Array.from({ length: SHARES[kind] }, (_, i) => ({ kind, i })));
  kinds.sort((a, b) => (a.i / SHARES[a.kind]) - (b.i / SHARES[b.kind]));
  return kinds.map(({ kind, i }, n) => {
    const deliveryId = `${run}-${n}`;
    const pr = (number: number, action: string) => ({ ...prExample, action, number, pull_request: { ...(prExample.pull_request as object), number } });
    const [event, payload] = kind === 'quiet' ? ['issues', { ...issueExample, issue: { ...(issueExample.issue as object), number: n } }]
      : kind === 'doomed' ? ['pull_request', pr(DOOMED_FROM + n, 'closed')]
        : ['pull_request', pr(1 + n, 'opened')];
    const body = JSON.stringify(payload);
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': deliveryId };
    // Invalid: a wrong secret, no signature, or a body changed after signing, in turn.
    if (kind !== 'invalid') headers['x-hub-signature-256'] = signHub(body, GH_SECRET);
    else if (i % 3 === 0) headers['x-hub-signature-256'] = signHub(body, 'not-the-secret');
    else if (i % 3 === 1) headers['x-hub-signature-256'] = signHub(`${body} `, GH_SECRET);
    return { kind, deliveryId, event, body, headers };
  });
}

/**
 * Sends every request not yet answered, CONCURRENCY at a time. `stopAfter` answers in, it
 * calls `midway` (once) and stops sending new requests; the in-flight ones still finish
 * or fail.
 */
async function send(url: () => string, sent: Sent[], options: { stopAfter?: number; midway?: () => void } = {}): Promise<void> {
  const queue = sent.filter((s) => s.answer === undefined);
  let answered = 0;
  let stopped = false;
  const next = async (): Promise<void> => {
    for (let item = queue.shift(); item && !stopped; item = queue.shift()) {
      try {
        const response = await fetch(`${url()}/webhooks/github`, { method: 'POST', body: item.body, headers: item.headers });
        item.answer = { status: response.status, body: (await response.json()) as Record<string, unknown> };
      } catch {
        continue; // no answer: the sender will try again
      }
      answered += 1;
      if (options.stopAfter !== undefined && answered >= options.stopAfter && !stopped) {
        stopped = true;
        options.midway?.();
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, next));
}

async function eventLog(dir: string): Promise<LogEntry[]> {
  const lists = await Promise.all(['reviews', 'doomed', 'quiet'].map(async (name) => {
    const result = await runCli(['--config-dir', dir, 'webhook', 'events', name, '--json', '--limit', '1000'], env);
    if (result.code !== 0) throw new Error(`webhook events ${name} failed: ${result.stderr}`);
    return JSON.parse(result.stdout) as LogEntry[];
  }));
  return lists.flat();
}

const TERMINAL = new Set(['delivered', 'suppressed', 'failed']);

const EXPECTED: Record<Exclude<Kind, 'invalid'>, string> = { reviews: 'delivered', doomed: 'failed', quiet: 'suppressed' };

/** The books: every valid request accepted once and finished, every invalid one rejected. */
async function balance(dir: string, sent: Sent[]): Promise<void> {
  const valid = sent.filter((s) => s.kind !== 'invalid');
  const invalid = sent.filter((s) => s.kind === 'invalid');
  // Accepted: 202, or 200 "duplicate" for a resend of one the killed server had stored.
  const accepted = new Set(valid.filter((s) => s.answer?.status === 202 || (s.answer?.status === 200 && s.answer.body.status === 'duplicate')));
  const rejected = new Set(sent.filter((s) => s.answer?.status === 401 && s.answer.body.code === 'signature_invalid'));

  let log: LogEntry[] = [];
  await eventually(async () => {
    log = await eventLog(dir);
    return log.length >= accepted.size && log.every((e) => TERMINAL.has(e.status));
  }, 'every accepted event to finish', 240_000).catch(() => undefined); // the checks below say what is missing
  const byDelivery = new Map<string, LogEntry[]>();
  for (const entry of log) byDelivery.set(entry.delivery_id, [...(byDelivery.get(entry.delivery_id) ?? []), entry]);
  const posted = [...comments.values()].flat();

  // Each request on its own: what went wrong with it, if anything.
  const problems = sent.flatMap((s): string[] => {
    const answer = `${s.answer?.status ?? 'no answer'} ${JSON.stringify(s.answer?.body ?? {})}`;
    if (s.kind === 'invalid') return rejected.has(s) && !byDelivery.has(s.deliveryId) ? [] : [`${s.deliveryId} (invalid): ${answer}`];
    const entries = byDelivery.get(s.deliveryId) ?? [];
    const entry = entries[0];
    if (!accepted.has(s)) return [`${s.deliveryId}: not accepted: ${answer}`];
    if (entries.length !== 1 || !entry) return [`${s.deliveryId}: ${entries.length} records in the event log`];
    if (entry.subscription !== s.kind || entry.status !== EXPECTED[s.kind]) return [`${s.deliveryId}: ${entry.subscription} ${entry.status}, expected ${s.kind} ${EXPECTED[s.kind]}`];
    if (entry.status === 'failed' && !(entry.error?.code === 'http_404' && /404/.test(entry.error.message))) return [`${s.deliveryId}: dead-lettered without its reason: ${JSON.stringify(entry.error)}`];
    const copies = posted.filter((c) => c.includes(`hookagent:${entry.subscription}:${entry.event_id} `)).length;
    if (copies !== (entry.status === 'delivered' ? 1 : 0)) return [`${s.deliveryId}: ${copies} comments`];
    return [];
  });
  tally.add(sent.length, problems.length);
  expect(problems.slice(0, 20)).toEqual([]);

  // And the books as a whole.
  const count = (status: string) => log.filter((e) => e.status === status).length;
  await tally.check(() => expect({
    accepted: accepted.size, rejected: rejected.size, delivered: count('delivered'), suppressed: count('suppressed'), deadLettered: count('failed'), records: log.length, comments: posted.length,
  }).toEqual({
    accepted: valid.length, rejected: invalid.length, delivered: SHARES.reviews, suppressed: SHARES.quiet, deadLettered: SHARES.doomed, records: valid.length, comments: SHARES.reviews,
  }));
}

test('a few thousand events, a sixth of them invalid: accepted = delivered + suppressed + dead-lettered, rejected = invalid', async () => {
  comments.clear();
  const dir = await configured();
  const serve = await startServe(dir, env, { quiet: true });
  try {
    const sent = requests('steady');
    await send(() => serve.url, sent);
    await balance(dir, sent);
  } finally {
    expect(await stopServe(serve)).toBe(0);
  }
}, 600_000);

test('the same with kill -9 of the server in the middle and a restart: the books still balance', async () => {
  comments.clear();
  const dir = await configured();
  let serve: Serve = await startServe(dir, env, { quiet: true });
  const sent = requests('killed');
  try {
    await send(() => serve.url, sent, { stopAfter: sent.length / 2, midway: () => serve.child.kill('SIGKILL') });
    expect(await serve.exited).toBeNull(); // killed by the signal, no exit code
    const unanswered = sent.filter((s) => s.answer === undefined).length;
    expect(unanswered).toBeGreaterThan(0);
    serve = await startServe(dir, env, { quiet: true });
    await send(() => serve.url, sent);
    await balance(dir, sent);
  } finally {
    expect(await stopServe(serve)).toBe(0);
  }
}, 600_000);
