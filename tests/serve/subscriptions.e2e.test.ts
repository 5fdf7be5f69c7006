/**
 * Issue 17 end to end through `hookagent serve` (a child process, real HTTP, the local
 * store and queue): routing of an event-less subscription, direct delivery without the
 * agent, debounce (five pushes to one pull request → one message, on the last), and the
 * request log read back with `hookagent webhook requests`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { buildCli, runCli } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { eventually, startServe, stopServe } from '../support/serve';

const GH_SECRET = 'e2e17-github-secret';
const env = { GH_SECRET, TELEGRAM_BOT_TOKEN: '42:e2e', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };

let telegram: LocalServer;
beforeAll(async () => {
  buildCli();
  telegram = await startLocalServer((_req, res) => sendJson(res, 200, { ok: true, result: { message_id: telegram.requests.length } }));
}, 60_000);
afterAll(async () => telegram.close());

async function post(url: string, event: string, payload: unknown, delivery: string) {
  const body = JSON.stringify(payload);
  const response = await fetch(`${url}/webhooks/github`, {
    method: 'POST', body, headers: { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': delivery, 'x-hub-signature-256': signHub(body, GH_SECRET) },
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

test('no events → custom only; --agent none --debounce 1s: five pushes to one PR → one Telegram message with the last commit; requests explains each', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-e2e17-'));
  writeFileSync(join(dir, 'config.yaml'), [
    'webhooks: { github: { secret: ${GH_SECRET} } }',
    `delivery: { timeout: 2s, messenger: { provider: telegram, bot_token: \${TELEGRAM_BOT_TOKEN}, chat_id: "-100", api_url: "${telegram.url}" } }`,
  ].join('\n'));
  const cli = (...args: string[]) => runCli(['--config-dir', dir, ...args], env);
  expect((await cli('webhook', 'subscribe', 'alerts', '--deliver', 'messenger')).code).toBe(0);
  expect((await cli('webhook', 'subscribe', 'pr-notify', '--events', 'github:pull_request.synchronize', '--agent', 'none', '--debounce', '1s',
    '--filter', 'pull_request.draft == false', '--deliver', 'messenger', '--prompt', '[SILENT] PR #{number} now at {pull_request.head.sha}')).code).toBe(0);
  const serve = await startServe(dir, env);
  try {
    // The routing case: a push with only the custom subscription and a pull_request one.
    expect(await post(serve.url, 'push', { ref: 'refs/heads/main' }, 'push-1')).toEqual({ status: 200, body: { status: 'ignored', reason: 'Event not handled', event: 'push' } });
    const shas = ['1111111', '2222222', '3333333', '4444444', '5555555'].map((s) => s.repeat(5) + 'abcde');
    const ids: string[] = [];
    for (const [i, sha] of shas.entries()) {
      const answer = await post(serve.url, 'pull_request', { action: 'synchronize', number: 5, pull_request: { number: 5, draft: false, head: { sha } }, repository: { full_name: 'o/r' } }, `sync-${i}`);
      expect(answer).toMatchObject({ status: 202, body: { status: 'accepted', subscriptions: ['pr-notify'] } });
      ids.push(answer.body.event_id as string);
    }
    const statuses = async () => {
      const list = JSON.parse((await cli('webhook', 'events', 'pr-notify', '--json', '--limit', '10')).stdout) as Array<{ event_id: string; status: string; superseded_by?: string }>;
      return new Map(list.map((e) => [e.event_id, e]));
    };
    let seen = new Map<string, { status: string; superseded_by?: string }>();
    await eventually(async () => {
      seen = await statuses();
      return ids.every((id) => ['superseded', 'delivered'].includes(seen.get(id)?.status ?? ''));
    }, 'the five events to finish', 30_000);
    expect(ids.map((id) => seen.get(id)?.status)).toEqual(['superseded', 'superseded', 'superseded', 'superseded', 'delivered']);
    expect(ids.slice(0, 4).map((id) => seen.get(id)?.superseded_by)).toEqual([ids[4], ids[4], ids[4], ids[4]]);
    // Direct delivery: the template as is, [SILENT] and all, once.
    const sent = telegram.requests.map((r) => JSON.parse(r.body) as { text: string });
    expect(sent).toHaveLength(1);
    expect(sent[0]?.text).toContain(`[SILENT] PR #5 now at ${shas[4]}`);

    const requests = JSON.parse((await cli('webhook', 'requests', '--json', '--limit', '10')).stdout) as Array<{ outcome: string; delivery_id?: string; candidates?: Array<{ subscription: string; matched: boolean; reason: string }> }>;
    expect(requests.map((r) => r.outcome)).toEqual(['accepted', 'accepted', 'accepted', 'accepted', 'accepted', 'not_handled']);
    expect(requests[5]?.candidates).toEqual(expect.arrayContaining([
      { subscription: 'alerts', matched: false, reason: 'no events: reached only through its custom endpoint' },
      { subscription: 'pr-notify', matched: false, reason: 'event filters github:pull_request.synchronize do not match github:push' },
    ]));
    expect(requests[0]?.candidates?.find((c) => c.subscription === 'pr-notify')).toMatchObject({ matched: true });
  } finally {
    expect(await stopServe(serve)).toBe(0);
  }
}, 90_000);

test('--max-runs-per-hour 1: the second event is accepted and recorded rate_limited; after raising the cap, webhook replay runs it; --model shows in events', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-e2e17-'));
  writeFileSync(join(dir, 'config.yaml'), 'webhooks: { github: { secret: ${GH_SECRET} } }\n');
  const cli = (...args: string[]) => runCli(['--config-dir', dir, ...args], env);
  expect((await cli('webhook', 'subscribe', 'capped', '--events', 'issues', '--max-runs-per-hour', '1', '--model', 'echo-small', '--prompt', 'Issue {issue.number}')).code).toBe(0);
  const serve = await startServe(dir, env);
  try {
    const ids: string[] = [];
    for (const number of [1, 2]) {
      const answer = await post(serve.url, 'issues', { action: 'opened', issue: { number }, repository: { full_name: 'o/r' } }, `issue-${number}`);
      expect(answer).toMatchObject({ status: 202, body: { status: 'accepted' } });
      ids.push(answer.body.event_id as string);
    }
    type Row = { event_id: string; status: string; model?: string; error?: { message: string } | null };
    let rows: Row[] = [];
    const final = new Set(['delivered', 'rate_limited']);
    await eventually(async () => {
      rows = JSON.parse((await cli('webhook', 'events', 'capped', '--json')).stdout) as Row[];
      return ids.every((id) => final.has(rows.find((r) => r.event_id === id)?.status ?? ''));
    }, 'both events to finish', 30_000);
    // The two may run at once: the atomic counter lets exactly one through.
    const mine = rows.filter((r) => ids.includes(r.event_id));
    expect(mine.map((r) => r.status).sort()).toEqual(['delivered', 'rate_limited']);
    const ran = mine.find((r) => r.status === 'delivered')!;
    const limited = mine.find((r) => r.status === 'rate_limited')!;
    expect(ran.model).toBe('echo-small');
    expect(limited.error?.message).toContain(`hookagent webhook replay ${limited.event_id}`);
    expect((await cli('webhook', 'show', 'capped')).stdout).toMatch(/model:\s+echo-small/);

    expect((await cli('webhook', 'update', 'capped', '--max-runs-per-hour', '5')).code).toBe(0);
    const replayed = await cli('webhook', 'replay', limited.event_id);
    expect(replayed.code).toBe(0);
    const replayId = /Queued (evt_\w+)/.exec(replayed.stdout)?.[1] ?? '';
    await eventually(async () => {
      rows = JSON.parse((await cli('webhook', 'events', 'capped', '--json')).stdout) as Row[];
      return rows.find((r) => r.event_id === replayId)?.status === 'delivered';
    }, 'the replay to be delivered', 30_000);
  } finally {
    expect(await stopServe(serve)).toBe(0);
  }
}, 90_000);
