/**
 * `hookagent console` with an `aws` section reads the deployment's tables with the user's
 * credentials (here the SDK's endpoint variables point at dynalite and a local SQS), and
 * its Replay sends to the deployment's queue. Nothing new is deployed.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { BIN, buildCli } from '../support/cli';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { eventually } from '../support/serve';
import { record } from './fixture';

let dynamo: TestDynamo;
let sqs: LocalServer;
const sent: string[] = [];
beforeAll(async () => {
  buildCli();
  dynamo = await startDynalite('prod');
  sqs = await startLocalServer((req, res) => {
    const input = JSON.parse(req.body) as { Entries?: Array<{ Id: string; MessageBody: string }> };
    if (String(req.headers['x-amz-target']) === 'AmazonSQS.GetQueueUrl') return sendJson(res, 200, { QueueUrl: `${sqs.url}/123456789012/hookagent-prod-queue` });
    for (const e of input.Entries ?? []) sent.push(e.MessageBody);
    sendJson(res, 200, { Successful: (input.Entries ?? []).map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: createHash('md5').update(e.MessageBody).digest('hex') })), Failed: [] });
  });
}, 60_000);
afterAll(async () => Promise.all([dynamo.close(), sqs.close()]));

test('the console over the AWS tables: list, one event, replay to the deployment queue', async () => {
  const SECRET = 'whsec_cmVtb3Rlc2VjcmV0cmVtb3Rlc2VjcmV0cmVtb3RlMTI=';
  await new DynamoSubscriptionStore(dynamo.client, 'hookagent-prod-subscriptions').create({
    name: 'remote', events: [], skills: [], deliver: ['log'], state: 'active', secret: SECRET, created_at: '2026-11-01T00:00:00.000Z', updated_at: '2026-11-01T00:00:00.000Z',
  });
  const original = record('remote', Date.now() - 60_000, 'delivered', { reply: 'done' });
  await new DynamoEventLog(dynamo.client, 'hookagent-prod-events').putAll([original]);
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-console-aws-'));
  writeFileSync(join(dir, 'config.yaml'), 'aws: { region: eu-west-1, stage: prod }\nwebhooks: { public_url: "https://abc.execute-api.eu-west-1.amazonaws.com" }\n');
  const env = { ...process.env, AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint, AWS_ENDPOINT_URL_SQS: sqs.url, AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'eu-west-1' };
  const child = spawn(process.execPath, [BIN, '--config-dir', dir, 'console', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  try {
    await eventually(() => /console on http:\/\/127\.0\.0\.1:\d+\/console/.test(out), 'the console to listen');
    expect(out).toContain("the AWS deployment 'prod' in eu-west-1");
    const base = /(http:\/\/127\.0\.0\.1:\d+)\/console/.exec(out)![1]!;
    const page = await fetch(`${base}/console`);
    const cookie = page.headers.get('set-cookie')!.split(';')[0]!;
    const csrf = /name="csrf-token" content="([^"]+)"/.exec(await page.text())![1]!;

    const list = ((await (await fetch(`${base}/console/api/events`)).json()) as { events: Array<{ event_id: string }> }).events;
    expect(list.map((e) => e.event_id)).toEqual([original.event_id]);
    const subs = await (await fetch(`${base}/console/api/subscriptions`)).text();
    expect(subs).toContain('https://abc.execute-api.eu-west-1.amazonaws.com/webhooks/custom/remote');
    expect(subs).not.toContain(SECRET);
    const one = (await (await fetch(`${base}/console/api/events/${original.event_id}`)).json()) as { records: Array<{ reply: string }> };
    expect(one.records[0]!.reply).toBe('done');

    const replay = await fetch(`${base}/console/api/events/${original.event_id}/replay`, { method: 'POST', headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' }, body: '{}' });
    expect(replay.status).toBe(200);
    expect(sent.map((b) => (JSON.parse(b) as { replay_of?: string }).replay_of)).toEqual([original.event_id]);
    expect((await (await fetch(`${base}/console/api/requests`)).json())).toEqual({ available: true, requests: [] }); // the deployment's request log table (issue 17), empty here;
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited).toBe(0);
}, 60_000);
