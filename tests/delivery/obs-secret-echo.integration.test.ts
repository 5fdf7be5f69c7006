/**
 * Hunt 12 (observability D2): DESIGN §3 "Secrets never appear in logs, responses, CLI
 * output". A target's error that echoes its credential is masked before anything cuts it
 * (redact.ts: "a secret is masked whole before the cut"), and in its percent-encoded form too.
 * The worker's processMessage with the real delivery targets, against a local stub API; the
 * event record, the dead-letter reason and every log line are checked.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { echoAgent } from '../../functions/core/agent/agent';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import { MASK } from '../../functions/core/redact';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage, TargetKind } from '../../functions/core/types';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

let dynamo: TestDynamo;
beforeAll(async () => { dynamo = await startDynalite(); });
afterAll(async () => dynamo.close());

let api: LocalServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

let n = 0;
/** One event for a new subscription delivering to `target` only, failed for good by the target's answer. */
async function deliverFailing(delivery: WorkerDeps['config']['delivery'], target: TargetKind) {
  n += 1;
  const name = `obs-secret-${n}`;
  const subscriptions = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  await subscriptions.create({ name, events: [], skills: [], deliver: [target], agent: 'none', prompt: 'Alert {name}', state: 'active', created_at: '', updated_at: '', secret: 'x' });
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  const logs: string[] = [];
  const dead: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-obs-secret-'));
  const deps: WorkerDeps = {
    events, subscriptions, payloads: new FilePayloadStore(join(dir, 'payloads')), agent: echoAgent, skills: new SkillLibrary(dir),
    targets: createDeliveryTargets(delivery), config: { agent: { provider: 'echo', timeout_ms: 1000, max_steps: 4 }, delivery },
    clock: { now: () => Date.now() }, logger: jsonLogger((line) => logs.push(line), 'debug'), maxReceiveCount: 3,
    deadLetters: { send: async (_body, reason) => void dead.push(reason) },
  };
  const message: QueueMessage = { v: 1, event_id: `evt_obs_secret_${n}`, subscription: name, source: 'custom', event: 'alert', delivery_id: `d${n}`, received_at: new Date().toISOString(), payload: { name: 'DiskFull' } };
  expect(await processMessage(JSON.stringify(message), 1, deps)).toEqual({ kind: 'ack', status: 'failed' });
  const record = await events.get(message.event_id, name);
  return { everything: [JSON.stringify(record), ...dead, ...logs].join('\n'), record };
}

test('Slack incoming webhook: a gateway error quoting the path across the 200-character cut leaves no part of the secret path', async () => {
  const SECRET_PART = 'Zq8Rk2Lm5Np7Vx1Wc3Yt6Hb9';
  api = await startLocalServer((req, res) => {
    // A gateway's plain-text error: a preamble, then the request path from character 160, so the cut at 200 falls inside it.
    res.writeHead(404, { 'content-type': 'text/plain' });
    const head = 'Not Found. The gateway has no upstream for this request; check the route table and the upstream health. no route for POST ';
    res.end(`${head.padEnd(160, '.')}${req.url} (request id 7f3a)`);
  });
  const { everything, record } = await deliverFailing({ timeout_ms: 1000, codehost: {}, teamchat: { provider: 'slack', webhook_url: `${api.url}/services/T0AAAA/B0BBBB/${SECRET_PART}`, api_url: 'https://slack.com/api' } } as never, 'teamchat');
  expect(record?.targets?.teamchat?.status).toBe('failed');
  // The gateway's words are kept, the path masked whole.
  expect(record?.targets?.teamchat?.detail).toMatch(/no route for POST \.+•+ \(request id 7f3a\)$/);
  for (const size of [4, 8]) expect(everything).not.toContain(SECRET_PART.slice(0, size));
  expect(everything).not.toContain('/services/T0AAAA');
});

test('Slack incoming webhook: a short error word is kept as it is', async () => {
  api = await startLocalServer((_req, res) => {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('no_service\n');
  });
  const { record } = await deliverFailing({ timeout_ms: 1000, codehost: {}, teamchat: { provider: 'slack', webhook_url: `${api.url}/services/T0AAAA/B0BBBB/Zq8Rk2Lm5Np7Vx1Wc3Yt6Hb9`, api_url: 'https://slack.com/api' } } as never, 'teamchat');
  expect(record?.targets?.teamchat?.detail).toBe('http_404: Slack refused the delivery (404): no_service');
});

test('Telegram: the bot token quoted percent-encoded (its ":" as %3A) is masked too', async () => {
  const TOKEN = '7012345678:AAHf9-secretTelegramBotToken_XYZ';
  api = await startLocalServer((req, res) => sendJson(res, 404, { ok: false, error_code: 404, description: `Not Found: ${req.method} ${encodeURIComponent(decodeURIComponent(req.url.split('?')[0] as string))}` }));
  const { everything, record } = await deliverFailing({ timeout_ms: 1000, codehost: {}, messenger: { provider: 'telegram', bot_token: TOKEN, chat_id: '-100', api_url: api.url } } as never, 'messenger');
  expect(record?.targets?.messenger?.status).toBe('failed');
  expect(record?.targets?.messenger?.detail).toContain(`Not Found: POST %2Fbot${MASK}%2FsendMessage`);
  expect(everything).not.toContain(TOKEN);
  expect(everything).not.toContain(encodeURIComponent(TOKEN));
  expect(everything).not.toContain('7012345678');
});
