/**
 * Hunt 9 (local) defect 1: `webhook pause` / `resume` from the CLI while serve is under
 * load. README: "Held events are released. Every event answered `held` is released by
 * `resume`, whatever the interleaving", and a release leaves each event "either held or
 * queued with its message, never queued without one". A worker holding a message queued
 * before the pause, with a resume landing before its delete, left the record `queued` with
 * no message (status then showed nothing waiting). Every event answered 202 must end
 * delivered, once. Waits poll `status --json`; no fixed sleeps.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { buildCli, runCli, type CliResult } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';

const env = { GH_SECRET: 'pause-load', TELEGRAM_BOT_TOKEN: '42:pause-load', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
const CYCLES = 6;
const SENDERS = 16;
const PAGE = 1000;

let telegram: LocalServer;
let dir: string;
let serve: Serve | undefined;
const cli = (...args: string[]): Promise<CliResult> => runCli(['--config-dir', dir, ...args], env);

beforeAll(async () => {
  buildCli();
  telegram = await startLocalServer((_req, res) => sendJson(res, 200, { ok: true, result: { message_id: telegram.requests.length } }));
  dir = mkdtempSync(join(tmpdir(), 'hookagent-pause-load-'));
  writeFileSync(join(dir, 'config.yaml'), [
    'webhooks: { github: { secret: ${GH_SECRET} } }',
    `delivery: { timeout: 5s, messenger: { provider: telegram, bot_token: \${TELEGRAM_BOT_TOKEN}, chat_id: "-100", api_url: "${telegram.url}" } }`,
  ].join('\n'));
}, 60_000);
afterAll(async () => {
  if (serve) await stopServe(serve);
  await telegram?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A signed GitHub `issues.opened` whose delivery id and title are `title`; the answer's status. */
async function post(url: string, title: string): Promise<number> {
  const body = JSON.stringify({ action: 'opened', issue: { number: 1, title }, repository: { full_name: 'o/r' } });
  const response = await fetch(`${url}/webhooks/github`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': title, 'x-hub-signature-256': signHub(body, env.GH_SECRET) } });
  await response.arrayBuffer();
  return response.status;
}

/** `SENDERS` loops posting `ev-N` while `more()` holds; each title's status. */
async function sendWhile(url: string, more: () => boolean): Promise<Map<string, number>> {
  const statuses = new Map<string, number>();
  let next = 0;
  const sender = async () => {
    while (more()) {
      const title = `ev-${next++}`;
      statuses.set(title, await post(url, title));
    }
  };
  await Promise.all(Array.from({ length: SENDERS }, sender));
  return statuses;
}

interface EventRow { event_id: string; status: string; delivery_id?: string }

/** Every event record of subscription `a`, page by page. */
async function allEvents(): Promise<EventRow[]> {
  const rows: EventRow[] = [];
  for (let before: string | undefined; ;) {
    const listed = await cli('webhook', 'events', 'a', '--json', '--limit', String(PAGE), ...(before ? ['--before', before] : []));
    expect(listed.code).toBe(0);
    const page = JSON.parse(listed.stdout) as EventRow[];
    rows.push(...page);
    if (page.length < PAGE) return rows;
    before = page[page.length - 1]!.event_id;
  }
}

/** Nothing waiting, in flight or held: no further progress can come. */
async function settled(): Promise<boolean> {
  const s = JSON.parse((await cli('status', '--json')).stdout) as { queue: { waiting: number; in_flight: number }; held: number };
  return s.queue.waiting === 0 && s.queue.in_flight === 0 && s.held === 0;
}

test('pause/resume cycles while events arrive: every event answered 202 is delivered once, none left queued without a message', async () => {
  expect((await cli('webhook', 'subscribe', 'a', '--events', 'issues', '--agent', 'none', '--deliver', 'messenger', '--prompt', 'A {issue.title}')).code).toBe(0);
  serve = await startServe(dir, env, { quiet: true });
  let cycles = 0;
  const sent = sendWhile(serve.url, () => cycles < CYCLES);
  for (; cycles < CYCLES; cycles++) {
    expect((await cli('webhook', 'pause', 'a')).code).toBe(0);
    expect((await cli('webhook', 'resume', 'a')).code).toBe(0);
  }
  const statuses = await sent;
  expect([...statuses.values()].filter((s) => s !== 202)).toEqual([]);
  await eventually(settled, 'the queue drained and nothing held', 120_000);
  const rows = await allEvents();
  expect(rows).toHaveLength(statuses.size);
  const stuck = rows.filter((r) => r.status !== 'delivered').map((r) => `${r.delivery_id} ${r.status}`);
  expect(stuck).toEqual([]);
  const texts = telegram.requests.map((r) => (JSON.parse(r.body) as { text: string }).text);
  expect(new Set(texts).size).toBe(texts.length);
  expect(texts).toHaveLength(statuses.size);
  expect(await stopServe(serve)).toBe(0);
  serve = undefined;
}, 240_000);
