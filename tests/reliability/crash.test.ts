/**
 * The worker process killed mid-batch: `hookagent serve` (ingest and worker in one process)
 * gets `kill -9` while its worker holds batches whose agent calls are in flight, and
 * again while deliveries to Slack are in flight. After a restart every accepted event
 * ends delivered, and Slack received each delivery once.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { buildCli, runCli } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';
import { Tally } from './tally';

const env = { GH_SECRET: 'crash-secret', OPENAI_API_KEY: 'sk-crash', SLACK_WEBHOOK_URL: '' };
const tally = new Tally('faults');
const EVENTS = 16;

let llm: LocalServer;
let slack: LocalServer;
/** While set, the model (or Slack) takes requests and never answers: work stays in flight. */
let llmHangs = false;
let slackHangs = false;
/** Messages Slack accepted (answered 200), by text. */
const posted: string[] = [];

beforeAll(async () => {
  buildCli();
  llm = await startLocalServer((req, res) => {
    if (llmHangs) return;
    const prompt = (JSON.parse(req.body) as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'user')?.content ?? '';
    sendJson(res, 200, { choices: [{ message: { role: 'assistant', content: `done ${/\w+-crash-\d+/.exec(prompt)?.[0]}` } }] });
  });
  slack = await startLocalServer((req, res) => {
    if (slackHangs) return; // the post never arrives: as if the connection dropped before Slack read it
    posted.push((JSON.parse(req.body) as { text: string }).text);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  env.SLACK_WEBHOOK_URL = `${slack.url}/services/T0/B0/x`;
}, 60_000);

afterAll(async () => {
  tally.flush();
  await Promise.all([llm.close(), slack.close()]);
});

async function serveWithEvents(name: string): Promise<{ dir: string; serve: Serve; ids: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-crash-'));
  writeFileSync(join(dir, 'config.yaml'), [
    'webhooks: { github: { secret: ${GH_SECRET} } }',
    `agent: { provider: openai, model: m, base_url: ${llm.url}/v1, api_key: \${OPENAI_API_KEY}, timeout: 60s }`,
    'delivery: { timeout: 30s, teamchat: { provider: slack, webhook_url: ${SLACK_WEBHOOK_URL} } }',
  ].join('\n'));
  expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', name, '--events', 'issues', '--prompt', 'Issue {issue.title}', '--deliver', 'teamchat'], env)).code).toBe(0);
  const serve = await startServe(dir, env);
  const ids: string[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const body = JSON.stringify({ action: 'opened', issue: { number: i, title: `${name}-crash-${i}` }, repository: { full_name: 'o/r' } });
    const response = await fetch(`${serve.url}/webhooks/github`, { method: 'POST', body, headers: { 'x-github-event': 'issues', 'x-github-delivery': `${name}-${i}`, 'x-hub-signature-256': signHub(body, env.GH_SECRET) } });
    expect(response.status).toBe(202);
    ids.push(String(((await response.json()) as { event_id: string }).event_id));
  }
  return { dir, serve, ids };
}

async function finishedAfterRestart(dir: string, name: string, ids: string[]): Promise<void> {
  llmHangs = false;
  slackHangs = false;
  const serve = await startServe(dir, env);
  try {
    await eventually(async () => {
      const result = await runCli(['--config-dir', dir, 'webhook', 'events', name, '--json', '--limit', '100'], env);
      const events = JSON.parse(result.stdout) as Array<{ event_id: string; status: string }>;
      return events.length === EVENTS && events.every((e) => e.status === 'delivered');
    }, 'every event delivered after the restart', 60_000);
    for (const [i, id] of ids.entries()) {
      await tally.check(() => expect({ id, copies: posted.filter((text) => new RegExp(`done ${name}-crash-${i}(?!\\d)`).test(text)).length }).toEqual({ id, copies: 1 }));
    }
  } finally {
    expect(await stopServe(serve)).toBe(0);
  }
}

test('kill -9 while batches wait on the agent: after a restart each event is delivered once', async () => {
  llmHangs = true;
  const { dir, serve, ids } = await serveWithEvents('agentcrash');
  // Two batches in flight (serve runs two consumers): their agent calls are all waiting.
  await eventually(() => llm.requests.length >= 2, 'agent calls in flight');
  serve.child.kill('SIGKILL');
  expect(await serve.exited).toBeNull();
  expect(posted.filter((p) => p.includes('agentcrash'))).toHaveLength(0);
  await finishedAfterRestart(dir, 'agentcrash', ids);
}, 120_000);

test('kill -9 while deliveries to Slack are in flight: after a restart each is delivered once', async () => {
  slackHangs = true;
  const before = slack.requests.length;
  const { dir, serve, ids } = await serveWithEvents('slackcrash');
  await eventually(() => slack.requests.length - before >= 2, 'deliveries in flight');
  serve.child.kill('SIGKILL');
  expect(await serve.exited).toBeNull();
  await finishedAfterRestart(dir, 'slackcrash', ids);
}, 120_000);
