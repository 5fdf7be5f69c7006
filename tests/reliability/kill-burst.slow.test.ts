/**
 * Issue 14 item 3 on the SQLite store: `hookagent serve` killed with SIGKILL in the middle
 * of a burst of 15 events, at a different point each time (after 0…14 answers), 20 times.
 * The sender retries what went unanswered with the same delivery id (as GitHub does).
 * Every event answered 202 (or "duplicate" on a retry) must end delivered exactly once.
 *
 * The model hangs during the bursts so that no delivery is under way at the kill (a
 * post that reached Slack just before a kill is a separate, at-least-once window of the
 * worker); 5 data dirs take 4 kills each so that no message reaches the queue's 5 receives.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { buildCli, runCli } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { eventually, startServe, stopServe } from '../support/serve';
import { Tally } from './tally';

const env = { GH_SECRET: 'kill-secret', OPENAI_API_KEY: 'sk-kill', SLACK_WEBHOOK_URL: '' };
const tally = new Tally('kill-9');
const BURST = 15;
const DIRS = 5;
const KILLS_PER_DIR = 4;

let llm: LocalServer;
let slack: LocalServer;
let llmHangs = false;
const posted: string[] = [];

beforeAll(async () => {
  buildCli();
  llm = await startLocalServer((req, res) => {
    if (llmHangs) return;
    const prompt = (JSON.parse(req.body) as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'user')?.content ?? '';
    sendJson(res, 200, { choices: [{ message: { role: 'assistant', content: `done ${/k\d+-r\d+-\d+/.exec(prompt)?.[0]}` } }] });
  });
  slack = await startLocalServer((req, res) => {
    posted.push((JSON.parse(req.body) as { text: string }).text);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  env.SLACK_WEBHOOK_URL = `${slack.url}/services/T0/B0/x`;
}, 60_000);

afterAll(async () => {
  tally.flush();
  await Promise.all([llm.close(), slack.close()]);
});

/** One request; resolves with its status, or 0 when the connection died with serve. */
async function post(url: string, title: string): Promise<number> {
  const body = JSON.stringify({ action: 'opened', issue: { number: 1, title }, repository: { full_name: 'o/r' } });
  try {
    const response = await fetch(`${url}/webhooks/github`, { method: 'POST', body, headers: { 'x-github-event': 'issues', 'x-github-delivery': title, 'x-hub-signature-256': signHub(body, env.GH_SECRET) } });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

test(`kill -9 during a burst, ${DIRS * KILLS_PER_DIR} times at varied points: every accepted event is delivered exactly once`, async () => {
  const killPoints: number[] = [];
  for (let d = 0; d < DIRS; d++) {
    const dir = mkdtempSync(join(tmpdir(), 'hookagent-kill-'));
    writeFileSync(join(dir, 'config.yaml'), [
      'webhooks: { github: { secret: ${GH_SECRET} } }',
      `agent: { provider: openai, model: m, base_url: ${llm.url}/v1, api_key: \${OPENAI_API_KEY}, timeout: 60s }`,
      'delivery: { timeout: 30s, teamchat: { provider: slack, webhook_url: ${SLACK_WEBHOOK_URL} } }',
    ].join('\n'));
    expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'burst', '--events', 'issues', '--prompt', 'Issue {issue.title}', '--deliver', 'teamchat'], env)).code).toBe(0);
    const accepted = new Set<string>();
    let unanswered: string[] = [];
    llmHangs = true;
    for (let r = 0; r < KILLS_PER_DIR; r++) {
      const serve = await startServe(dir, env, { quiet: true });
      // The sender's retries of what the killed serve left unanswered.
      for (const title of unanswered) {
        const status = await post(serve.url, title);
        expect([title, [200, 202]]).toEqual([title, expect.arrayContaining([status])]);
        accepted.add(title);
      }
      unanswered = [];
      const killAfter = (d * KILLS_PER_DIR + r) * 4 % BURST;
      killPoints.push(killAfter);
      let answered = 0;
      const titles = Array.from({ length: BURST }, (_, i) => `k${d}-r${r}-${i}`);
      const results = await Promise.all(titles.map(async (title) => {
        if (killAfter === 0 && answered === 0) setImmediate(() => serve.child.kill('SIGKILL'));
        const status = await post(serve.url, title);
        if (status === 202) {
          answered += 1;
          if (answered === killAfter) serve.child.kill('SIGKILL');
        }
        return [title, status] as const;
      }));
      serve.child.kill('SIGKILL');
      await serve.exited;
      for (const [title, status] of results) {
        if (status === 202) accepted.add(title);
        else unanswered.push(title);
      }
    }
    llmHangs = false;
    const serve = await startServe(dir, env, { quiet: true });
    try {
      for (const title of unanswered) {
        expect([200, 202]).toContain(await post(serve.url, title));
        accepted.add(title);
      }
      await eventually(async () => {
        const result = await runCli(['--config-dir', dir, 'webhook', 'events', 'burst', '--json', '--limit', '1000'], env);
        const events = JSON.parse(result.stdout) as Array<{ status: string }>;
        return events.length >= accepted.size && events.every((e) => e.status === 'delivered');
      }, `every event of dir ${d} delivered`, 60_000);
    } finally {
      expect(await stopServe(serve)).toBe(0);
    }
    expect(accepted.size).toBe(KILLS_PER_DIR * BURST);
    for (const title of accepted) {
      await tally.check(() => expect({ title, copies: posted.filter((p) => p.includes(`done ${title}`) && new RegExp(`done ${title}(?!\\d)`).test(p)).length }).toEqual({ title, copies: 1 }));
    }
  }
  // The kill points cover the whole burst.
  expect(new Set(killPoints).size).toBeGreaterThanOrEqual(10);
}, 300_000);
