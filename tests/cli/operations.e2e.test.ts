/**
 * Issue 20: `status`, `secrets delete`, `webhook dead-letters` and `redrive` against the
 * recording AWS endpoint (CloudFormation query protocol, SQS/SSM/CloudWatch JSON, DynamoDB
 * through dynalite), run as users run the CLI. Every call must be allowed by the CLI
 * policy the README gives (infra/cli-policy.json).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../functions/core/ports';
import { openLocalRuntime } from '../../functions/local/compose';
import { DynamoEventLog } from '../../functions/aws/event-log';
import type { EventRecord, QueueMessage } from '../../functions/core/types';
import { startAwsRecorder, type AwsRecorder, type RecordedMessage, type RecorderOptions } from '../support/aws-recorder';
import { buildCli, runCli } from '../support/cli';
import { startDynalite, type TestDynamo } from '../support/dynalite';

const CONFIG = 'aws: { stage: prod, region: eu-west-1 }\nwebhooks:\n  github: { secret: ${GITHUB_WEBHOOK_SECRET} }\ndelivery:\n  teamchat: { provider: slack, webhook_url: ${SLACK_WEBHOOK_URL} }\n';
const hash = (text: string) => createHash('sha256').update(text).digest('hex');

let dynamo: TestDynamo;
let recorder: AwsRecorder;
let options: RecorderOptions & { queues: Record<string, RecordedMessage[]>; stacks: NonNullable<RecorderOptions['stacks']> };
let dir: string;
const queueUrl = () => `${recorder.url}/123456789012/hookagent-prod-queue`;
const dlqUrl = () => `${recorder.url}/123456789012/hookagent-prod-dead-letters`;

beforeAll(async () => {
  buildCli();
  dynamo = await startDynalite('prod');
  options = { dynamoEndpoint: dynamo.endpoint, parameters: {}, queues: {}, stacks: {}, metrics: {} };
  recorder = await startAwsRecorder(options);
  dir = mkdtempSync(join(tmpdir(), 'hookagent-ops-'));
  writeFileSync(join(dir, 'config.yaml'), CONFIG);
}, 120_000);
afterAll(async () => Promise.all([recorder.close(), dynamo.close()]));

/** A healthy deployment of `prod`, as the recorder answers it. */
function healthy(): void {
  options.parameters = { '/hookagent/prod/GITHUB_WEBHOOK_SECRET': 'g', '/hookagent/prod/SLACK_WEBHOOK_URL': 's' };
  options.queues = {
    [queueUrl()]: [{ id: 'q1', body: '{}' }, { id: 'q2', body: '{}', hiddenUntil: Date.now() + 60_000 }],
    [dlqUrl()]: [],
  };
  options.stacks = {
    'hookagent-prod': {
      status: 'UPDATE_COMPLETE',
      outputs: { HttpApiUrl: recorder.url, EventQueueUrl: queueUrl(), DeadLetterQueueUrl: dlqUrl(), ConfigHash: hash(CONFIG), Stage: 'prod' },
    },
  };
  options.metrics = { ApproximateAgeOfOldestMessage: 42 };
  options.healthStatus = 200;
  recorder.calls.length = 0;
}

const env = () => ({
  AWS_ENDPOINT_URL_DYNAMODB: recorder.url, AWS_ENDPOINT_URL_SQS: recorder.url, AWS_ENDPOINT_URL_SSM: recorder.url,
  AWS_ENDPOINT_URL_CLOUDFORMATION: recorder.url, AWS_ENDPOINT_URL_CLOUDWATCH: recorder.url,
  AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'eu-west-1', AWS_MAX_ATTEMPTS: '1',
});
const cli = (...args: string[]) => runCli(['--config-dir', dir, ...args], env());

/** Every call the CLI made is allowed by the policy the README documents. */
function expectAllowedByCliPolicy(): void {
  const policy = JSON.parse(readFileSync(join(__dirname, '..', '..', 'infra', 'cli-policy.json'), 'utf8')) as { Statement: Array<{ Action: string[] }> };
  const allowed = new Set(policy.Statement.flatMap((s) => s.Action));
  const made = [...new Set(recorder.calls.map((c) => c.action))].filter((a) => !a.startsWith('http:'));
  expect(made.filter((action) => !allowed.has(action))).toEqual([]);
  expect(made.length).toBeGreaterThan(0);
}

describe('hookagent status', () => {
  test('healthy: exit 0, the stage, URL, queue figures and no attention', async () => {
    healthy();
    const result = await cli('status', '--json');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({
      stage: 'prod', region: 'eu-west-1', stack: { name: 'hookagent-prod', status: 'UPDATE_COMPLETE' }, url: recorder.url,
      health: { ok: true, status: 200 }, queue: { depth: 1, in_flight: 1, oldest_message_age_seconds: 42 }, dead_letters: { depth: 0 },
      secrets: { referenced: ['GITHUB_WEBHOOK_SECRET', 'SLACK_WEBHOOK_URL'], missing: [] }, config: { drift: false, local_hash: hash(CONFIG) }, attention: [],
    });
    expect(recorder.calls.map((c) => c.action)).toEqual(expect.arrayContaining([
      'cloudformation:DescribeStacks', 'http:GET', 'sqs:GetQueueAttributes', 'ssm:GetParametersByPath', 'cloudwatch:GetMetricData',
    ]));
    expectAllowedByCliPolicy();
    const text = await cli('status');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('All good.');
  }, 60_000);

  test('a missing secret: exit 3 and the name to set', async () => {
    healthy();
    delete options.parameters['/hookagent/prod/SLACK_WEBHOOK_URL'];
    const result = await cli('status', '--json');
    expect(result.code).toBe(3);
    const report = JSON.parse(result.stdout);
    expect(report.secrets.missing).toEqual(['SLACK_WEBHOOK_URL']);
    expect(report.attention).toEqual([expect.stringContaining(`hookagent --config-dir ${dir} secrets set <NAME> --stage prod`)]);
  }, 60_000);

  test('config drift: the deployed hash differs from the local config.yaml', async () => {
    healthy();
    options.stacks['hookagent-prod']!.outputs.ConfigHash = hash('webhooks: {}\n');
    const result = await cli('status');
    expect(result.code).toBe(3);
    expect(result.stdout).toContain('DIFFERS from the deployed one');
    expect(result.stdout).toContain('npx osls deploy');
  }, 60_000);

  test('config drift: a skill under skills/ edited after the deployment counts too', async () => {
    healthy();
    const skill = join(dir, 'skills', 'triage');
    mkdirSync(skill, { recursive: true });
    try {
      writeFileSync(join(skill, 'SKILL.md'), '---\nname: triage\ndescription: Sort alerts\n---\nSort them.\n');
      // As packaging baked it: config.yaml and this skill.
      const { deploymentHash } = require('../../infra/deploy-config.cjs') as { deploymentHash(dir: string): string };
      options.stacks['hookagent-prod']!.outputs.ConfigHash = deploymentHash(dir);
      expect(deploymentHash(dir)).not.toBe(hash(CONFIG));
      const same = JSON.parse((await cli('status', '--json')).stdout);
      expect(same.config).toMatchObject({ drift: false });

      writeFileSync(join(skill, 'SKILL.md'), '---\nname: triage\ndescription: Sort alerts\n---\nSort them by severity.\n');
      const result = await cli('status');
      expect(result.code).toBe(3);
      expect(result.stdout).toContain('DIFFERS from the deployed one');
      expect(result.stdout).toContain('config.yaml or a skill under skills/ differs from the deployed one: npx osls deploy');
    } finally {
      rmSync(join(dir, 'skills'), { recursive: true, force: true });
    }
    // Without user skills the hash is config.yaml's alone, as deployments made before skills counted recorded it.
    expect((require('../../infra/deploy-config.cjs') as { deploymentHash(dir: string): string }).deploymentHash(dir)).toBe(hash(CONFIG));
  }, 60_000);

  test('dead letters and a failing /health: exit 3 with both named', async () => {
    healthy();
    options.queues[dlqUrl()]!.push({ id: 'd1', body: '{}' }, { id: 'd2', body: '{}' });
    options.healthStatus = 503;
    const report = JSON.parse((await cli('status', '--json')).stdout);
    expect(report.dead_letters.depth).toBe(2);
    expect(report.health).toEqual({ ok: false, status: 503 });
    expect(report.attention).toEqual(expect.arrayContaining([expect.stringContaining('2 dead letter(s)'), '/health answered 503']));
  }, 60_000);

  test('run from a checkout, the commands in the attention lines say npx hookagent', async () => {
    healthy();
    delete options.parameters['/hookagent/prod/SLACK_WEBHOOK_URL'];
    options.queues[dlqUrl()]!.push({ id: 'd1', body: '{}' });
    const result = await runCli(['--config-dir', dir, 'status', '--json'], { ...env(), PATH: '/usr/bin:/bin', npm_lifecycle_event: '' });
    expect(result.code).toBe(3);
    const report = JSON.parse(result.stdout) as { attention: string[] };
    expect(report.attention).toEqual(expect.arrayContaining([
      `1 dead letter(s): npx hookagent --config-dir ${dir} webhook dead-letters --stage prod`,
      `secrets missing in SSM: SLACK_WEBHOOK_URL (npx hookagent --config-dir ${dir} secrets set <NAME> --stage prod)`,
    ]));
  }, 60_000);

  test('a stage that is not deployed: exit 1 with what to do; no stage at all: the local service (DESIGN §2.5)', async () => {
    healthy();
    const missing = await cli('--stage', 'qa', 'status');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("The stage 'qa' is not deployed in eu-west-1 (no stack hookagent-qa): npx osls deploy --stage qa");
    const local = mkdtempSync(join(tmpdir(), 'hookagent-ops-local-'));
    const none = await runCli(['--config-dir', local, 'status'], env());
    expect([none.code, none.stdout]).toEqual([3, expect.stringContaining(`serve is not running: npx hookagent --config-dir ${local} serve`)]);
    expect(none.stderr).toBe('');
  }, 60_000);
});

describe('hookagent secrets delete', () => {
  test('deletes the parameter; a missing one and a bad name are refused with nothing changed', async () => {
    healthy();
    options.parameters['/hookagent/prod/OLD_TOKEN'] = 'x';
    const deleted = await cli('secrets', 'delete', 'OLD_TOKEN');
    expect(deleted).toMatchObject({ code: 0, stdout: 'Deleted /hookagent/prod/OLD_TOKEN.\n', stderr: '' });
    expect(options.parameters).not.toHaveProperty('/hookagent/prod/OLD_TOKEN');
    const again = await cli('secrets', 'delete', 'OLD_TOKEN');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("No secret OLD_TOKEN for stage 'prod'");
    const bad = await cli('secrets', 'delete', '../etc');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('is not a variable name');
    // Deleting one the config still references warns.
    const referenced = await cli('secrets', 'delete', 'SLACK_WEBHOOK_URL');
    expect(referenced.code).toBe(0);
    expect(referenced.stderr).toContain('config.yaml still references ${SLACK_WEBHOOK_URL}');
    expectAllowedByCliPolicy();
  }, 60_000);
});

describe('hookagent webhook dead-letters / redrive', () => {
  const message = (id: string): QueueMessage => ({
    v: 1, event_id: id, subscription: 'alerts', source: 'custom', event: 'alert', delivery_id: id, received_at: '2026-11-22T12:00:00.000Z', payload: { n: 1 },
  });
  const failedRecord = (id: string): EventRecord => ({
    event_id: id, subscription: 'alerts', status: 'failed', source: 'custom', event: 'alert', delivery_id: id, received_at: '2026-11-22T12:00:00.000Z',
    updated_at: '2026-11-22T12:01:00.000Z', message: message(id), attempts: 5, error: { code: 'provider_auth', message: 'refused' },
  });

  test('lists dead letters (reason, receives, malformed ones by id) and leaves them in the queue; listing again does not count its own receives', async () => {
    healthy();
    options.queues[dlqUrl()]!.push(
      { id: 'd1', body: JSON.stringify(message('evt_dead_1')), reason: 'provider_auth: refused', sentAt: Date.parse('2026-11-22T12:01:00Z') },
      { id: 'd2', body: 'not json', sentAt: Date.parse('2026-11-22T12:02:00Z') },
    );
    const result = await cli('webhook', 'dead-letters', '--json');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual([
      { id: 'd1', event_id: 'evt_dead_1', subscription: 'alerts', reason: 'provider_auth: refused', receive_count: 1, dead_at: '2026-11-22T12:01:00.000Z' },
      // A letter the queue's redrive moved (no reason of ours): SQS keeps its original SentTimestamp, so
      // that is when it was first queued (queued_at); when it was dead-lettered is not known (no dead_at).
      { id: 'd2', reason: 'the queue gave up after 5 receives', receive_count: 5, queued_at: '2026-11-22T12:02:00.000Z' },
    ]);
    // Listing made them visible again at once.
    expect(options.queues[dlqUrl()]!.every((m) => (m.hiddenUntil ?? 0) <= Date.now())).toBe(true);
    const text = await cli('webhook', 'dead-letters');
    // Piped: a header and one tab-separated row per letter; the hint on stderr.
    const [header, ...rows] = text.stdout.trim().split('\n');
    expect(header).toBe('DEAD AT\tEVENT ID\tSUBSCRIPTION\tRECEIVES\tREASON');
    expect(rows.map((r) => r.split('\t')[0])).toEqual(['2026-11-22T12:01:00.000Z', 'queued 2026-11-22T12:02:00.000Z']);
    expect(rows.map((r) => r.split('\t').slice(1))).toEqual([['evt_dead_1', 'alerts', '1', 'provider_auth: refused'], ['(malformed message d2)', '-', '5', 'the queue gave up after 5 receives']]);
    expect(text.stderr).toMatch(/2 dead letter\(s\)\. '(npx )?hookagent --config-dir \S+ webhook redrive' moves them back/);
    expectAllowedByCliPolicy();
  }, 60_000);

  test('redrive by event id: the record reopens, the message goes back to the queue, the others stay', async () => {
    healthy();
    const events = new DynamoEventLog(dynamo.client, 'hookagent-prod-events');
    await events.putAll([failedRecord('evt_dead_2'), failedRecord('evt_dead_3')]);
    options.queues[dlqUrl()]!.push({ id: 'd2', body: JSON.stringify(message('evt_dead_2')) }, { id: 'd3', body: JSON.stringify(message('evt_dead_3')) }, { id: 'dx', body: 'junk' });
    const result = await cli('webhook', 'redrive', 'evt_dead_2');
    expect(result).toMatchObject({ code: 0, stdout: "Redrove evt_dead_2 for 'alerts'.\n", stderr: '' });
    expect(options.queues[dlqUrl()]!.map((m) => m.id)).toEqual(['d3', 'dx']);
    expect(options.queues[queueUrl()]!.map((m) => m.body)).toContain(JSON.stringify(message('evt_dead_2')));
    const reopened = await events.get('evt_dead_2', 'alerts');
    expect(reopened).toMatchObject({ status: 'queued', attempts: 5 });
    expect(reopened?.error).toBeUndefined();
    expect((await events.get('evt_dead_3', 'alerts'))?.status).toBe('failed');

    // An id not in the dead-letter queue, and one that is not an id at all.
    const unknown = await cli('webhook', 'redrive', 'evt_not_there');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('Not in the dead-letter queue: evt_not_there');
    const bad = await cli('webhook', 'redrive', 'DROP TABLE');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Not an event id');

    // All: every letter that carries a queue message; a malformed one stays.
    const all = await cli('webhook', 'redrive');
    expect(all.stdout).toBe("Redrove evt_dead_3 for 'alerts'.\n");
    expect(options.queues[dlqUrl()]!.map((m) => m.id)).toEqual(['dx']);
    expectAllowedByCliPolicy();
  }, 60_000);
});

describe('help and usage of the operations commands', () => {
  test.each([[['status']], [['webhook', 'dead-letters']], [['webhook', 'redrive']], [['secrets', 'delete']]])('%p --help shows options and an example', async (args) => {
    const result = await cli(...args, '--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('--stage');
    expect(result.stdout).toMatch(/Examples:/);
  }, 30_000);

  test('secrets delete without a name, and status with an unknown option: exit 2 with usage', async () => {
    for (const args of [['secrets', 'delete'], ['status', '--bogus']]) {
      const result = await cli(...args);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('error:');
      expect(result.stdout).toBe('');
    }
  }, 30_000);
});

test('local mode: dead-letters lists the local dead-letter table; redrive reopens the record and queues the message again', async () => {
  const local = mkdtempSync(join(tmpdir(), 'hookagent-ops-local-'));
  const empty = await runCli(['--config-dir', local, 'webhook', 'dead-letters', '--json'], {});
  expect(empty).toMatchObject({ code: 0, stdout: '[]\n' });
  expect(await runCli(['--config-dir', local, 'webhook', 'redrive'], {})).toMatchObject({ code: 0, stdout: 'No dead letters to redrive.\n' });

  // A failed event as the worker leaves it: its record failed, its message in the dead-letter table.
  const runtime = await openLocalRuntime(join(local, 'data'), { role: 'cli', clock: systemClock });
  const at = new Date().toISOString();
  const message = { v: 1 as const, event_id: 'evt_0mwlocaldead00000000000001', subscription: 'alerts', source: 'custom' as const, event: 'alert', delivery_id: 'd1', received_at: at, payload: { x: 1 } };
  await runtime.events.putAll([{ event_id: message.event_id, subscription: 'alerts', status: 'failed', source: 'custom', event: 'alert', delivery_id: 'd1', received_at: at, updated_at: at, message, attempts: 1, error: { code: 'provider_auth', message: 'bad key' } }]);
  await runtime.queue.deadLetterSink().send(JSON.stringify(message), 'provider_auth: bad key', 1);
  await runtime.close();

  const listed = JSON.parse((await runCli(['--config-dir', local, 'webhook', 'dead-letters', '--json'], {})).stdout) as Array<Record<string, unknown>>;
  expect(listed).toEqual([expect.objectContaining({ event_id: message.event_id, subscription: 'alerts', reason: 'provider_auth: bad key', receive_count: 1 })]);
  const redriven = await runCli(['--config-dir', local, 'webhook', 'redrive', message.event_id], {});
  expect(redriven).toMatchObject({ code: 0, stdout: `Redrove ${message.event_id} for 'alerts'.\n` });

  const after = await openLocalRuntime(join(local, 'data'), { role: 'cli', clock: systemClock });
  try {
    expect(await after.deadLetters.list()).toEqual([]);
    const [queued] = await after.queue.receive(10);
    expect(JSON.parse(queued!.body)).toMatchObject({ event_id: message.event_id });
    expect(await after.events.get(message.event_id, 'alerts')).toMatchObject({ status: 'queued' });
  } finally {
    after.close();
  }
}, 60_000);
