/**
 * `webhook events` pages over the event records, with the requests the subscription's
 * filters turned away on the first page (README hunt 7, defect A): following the printed
 * `Older events:` hints lists every accepted event exactly once, even when newer filtered
 * requests fill the first page (the hint used to be missing, or its --before the last
 * record fetched rather than shown, so the next page skipped the ones cut). Through
 * `hookagent serve` over real HTTP on 127.0.0.1 and the built CLI.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { buildCli, runCli } from '../support/cli';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';

const GH_SECRET = 'paging-e2e-github-secret';
const env = { GH_SECRET, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
let serve: Serve;
let dir: string;

beforeAll(async () => {
  buildCli();
  dir = mkdtempSync(join(tmpdir(), 'hookagent-paging-'));
  writeFileSync(join(dir, 'config.yaml'), 'webhooks: { github: { secret: ${GH_SECRET} } }\n');
  serve = await startServe(dir, env);
}, 90_000);
afterAll(async () => {
  if (serve) expect(await stopServe(serve)).toBe(0);
});

let delivery = 0;
async function post(title: string): Promise<{ status: number; body: { status?: string; event_id?: string } }> {
  const body = JSON.stringify({ action: 'opened', issue: { number: 1, title }, repository: { full_name: 'o/r' } });
  const response = await fetch(`${serve.url}/webhooks/github`, {
    method: 'POST', body, headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': `paging-${delivery++}`, 'x-hub-signature-256': signHub(body, GH_SECRET) },
  });
  return { status: response.status, body: (await response.json()) as { status?: string; event_id?: string } };
}

/** Every row id `webhook events` lists, following its `Older events:` hints from `--limit <limit>`. */
async function followPages(limit: number): Promise<string[]> {
  const ids: string[] = [];
  let args = ['--config-dir', dir, 'webhook', 'events', 'triage', '--limit', String(limit)];
  for (let pages = 0; pages < 20; pages++) {
    const result = await runCli(args, env);
    expect(result.code).toBe(0);
    ids.push(...[...result.stdout.matchAll(/\b(evt_[0-9a-z]+|req_[0-9a-z]+)\b/g)].map((m) => m[1] as string));
    const hint = /Older events: .* (--limit \d+ --before (evt_[0-9a-z]+))/.exec(result.stderr);
    if (!hint) return ids;
    args = ['--config-dir', dir, 'webhook', 'events', 'triage', '--limit', String(limit), '--before', hint[2] as string];
  }
  throw new Error('more than 20 pages');
}

test('one accepted event, then newer filtered requests: every page size lists the event exactly once', async () => {
  const sub = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'triage', '--events', 'issues', '--filter', 'issue.title != "skip"', '--prompt', 'Issue {issue.title}'], env);
  expect(sub.code).toBe(0);
  const older = await post('first');
  expect(older.status).toBe(202);
  const newer = await post('second');
  expect(newer.status).toBe(202);
  for (let n = 0; n < 3; n++) expect((await post('skip')).status).toBe(200);
  const accepted = [older.body.event_id, newer.body.event_id] as string[];
  await eventually(async () => {
    const listed = JSON.parse((await runCli(['--config-dir', dir, 'webhook', 'events', 'triage', '--json', '--limit', '10'], env)).stdout) as Array<{ event_id: string | null; status: string }>;
    return listed.filter((e) => e.event_id && e.status === 'delivered').length === 2;
  }, 'both accepted events to be delivered');

  for (const limit of [1, 2, 3, 4, 10]) {
    const ids = await followPages(limit);
    const events = ids.filter((id) => id.startsWith('evt_'));
    expect({ limit, events }).toEqual({ limit, events: [...accepted].reverse() });
  }
}, 120_000);
