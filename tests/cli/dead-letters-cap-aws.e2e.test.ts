/**
 * Hunt 10 (cliaws) D3: on AWS, `webhook dead-letters` and `redrive` stopped at 1,000 letters
 * without a word (the listing receives the whole queue, and SQS has no count but an
 * approximate one). Now the listing says it shows the first 1,000 of ~N, and `redrive`
 * (all) goes on in batches until the dead-letter queue is empty. Against the recording AWS
 * endpoint (SQS) and dynalite, through the built CLI.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAwsRecorder, type AwsRecorder, type RecordedMessage, type RecorderOptions } from '../support/aws-recorder';
import { buildCli, runCli } from '../support/cli';
import { startDynalite, type TestDynamo } from '../support/dynalite';

let dynamo: TestDynamo;
let recorder: AwsRecorder;
let options: RecorderOptions & { queues: Record<string, RecordedMessage[]> };
let dir: string;
let queue: string;
let dlq: string;

beforeAll(async () => {
  buildCli();
  dynamo = await startDynalite('prod');
  options = { dynamoEndpoint: dynamo.endpoint, parameters: {}, queues: {} };
  recorder = await startAwsRecorder(options);
  queue = `${recorder.url}/123456789012/hookagent-prod-queue`;
  dlq = `${recorder.url}/123456789012/hookagent-prod-dead-letters`;
  dir = mkdtempSync(join(tmpdir(), 'hookagent-dlq-cap-'));
  writeFileSync(join(dir, 'config.yaml'), 'aws: { stage: prod, region: eu-west-1 }\n');
}, 120_000);
afterAll(async () => Promise.all([recorder.close(), dynamo.close()]));

const env = () => ({
  AWS_ENDPOINT_URL_DYNAMODB: recorder.url, AWS_ENDPOINT_URL_SQS: recorder.url,
  AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'eu-west-1', AWS_MAX_ATTEMPTS: '1',
});

const LETTERS = 1010;
const at = '2026-11-22T12:00:00.000Z';
const eventId = (i: number) => `evt_cap_${String(i).padStart(5, '0')}`;
const letter = (i: number): RecordedMessage => ({
  id: `l${i}`, reason: 'provider_auth: refused', sentAt: Date.parse(at) + i,
  body: JSON.stringify({ v: 1, event_id: eventId(i), subscription: 'alerts', source: 'custom', event: 'alert', delivery_id: eventId(i), received_at: at, payload: {} }),
});
const fill = (count: number) => (options.queues = { [queue]: [], [dlq]: Array.from({ length: count }, (_, i) => letter(i)) });
const NOTE = /^note: showing the first 1000 dead letters of ~1010 in the queue \(SQS lists at most 1000 at once; oldest first among these only\)\. '(npx )?hookagent( --config-dir \S+)? webhook redrive' moves them all\.$/m;

test('dead-letters with more than 1,000 letters: the first 1,000, and a note on stderr saying there are ~1,010', async () => {
  fill(LETTERS);
  const listed = await runCli(['--config-dir', dir, 'webhook', 'dead-letters', '--json'], env());
  expect(listed.code).toBe(0);
  const letters = JSON.parse(listed.stdout) as Array<{ event_id: string }>;
  expect(letters).toHaveLength(1000);
  expect(new Set(letters.map((l) => l.event_id)).size).toBe(1000);
  expect(listed.stderr).toMatch(NOTE);

  const table = await runCli(['--config-dir', dir, 'webhook', 'dead-letters'], env());
  expect(table.code).toBe(0);
  expect(table.stdout.split('\n').filter((l) => l.includes('evt_cap_'))).toHaveLength(1000);
  expect(table.stderr).toMatch(NOTE);
  // Listing leaves every letter where it was, visible.
  expect(options.queues[dlq]).toHaveLength(LETTERS);
}, 180_000);

test('dead-letters with fewer than 1,000 letters says nothing about a cap', async () => {
  fill(12);
  const listed = await runCli(['--config-dir', dir, 'webhook', 'dead-letters', '--json'], env());
  expect(listed).toMatchObject({ code: 0, stderr: '' });
  expect(JSON.parse(listed.stdout)).toHaveLength(12);
}, 60_000);

test('redrive (all) moves every letter, past the first 1,000, until the dead-letter queue is empty', async () => {
  fill(LETTERS);
  const result = await runCli(['--config-dir', dir, 'webhook', 'redrive'], env());
  expect(result).toMatchObject({ code: 0, stderr: '' });
  const moved = result.stdout.split('\n').filter((l) => l.startsWith('Redrove '));
  expect(new Set(moved).size).toBe(LETTERS);
  expect(options.queues[dlq]).toEqual([]);
  expect(options.queues[queue]!.map((m) => (JSON.parse(m.body) as { event_id: string }).event_id).sort()).toEqual(Array.from({ length: LETTERS }, (_, i) => eventId(i)));
}, 300_000);

test('redrive of one event id finds it past the first 1,000 letters and leaves the others visible', async () => {
  fill(LETTERS);
  const last = eventId(LETTERS - 1);
  const result = await runCli(['--config-dir', dir, 'webhook', 'redrive', last], env());
  expect(result).toMatchObject({ code: 0, stderr: '', stdout: `Redrove ${last} for 'alerts'.\n` });
  expect(options.queues[dlq]).toHaveLength(LETTERS - 1);
  expect(options.queues[dlq]!.every((m) => !m.hiddenUntil || m.hiddenUntil <= Date.now())).toBe(true);
}, 180_000);
