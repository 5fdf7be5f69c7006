/**
 * `hookagent webhook pause` on AWS keeps a subscription's held events that still carry the
 * events table's TTL, also when the subscription is paused already (the way to keep those
 * of a pause begun before the upgrade), with nothing but the calls the CLI policy the
 * README gives (infra/cli-policy.json) allows: the operator's credentials, not a Lambda
 * role, run it. The built CLI against dynalite, through the recording AWS endpoint, which
 * refuses any other call as IAM would.
 */
import { GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { messageKey } from '../../functions/aws/event-items';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import type { EventRecord, Subscription } from '../../functions/core/types';
import { startAwsRecorder, type AwsRecorder } from '../support/aws-recorder';
import { runCli, tempConfigDir } from '../support/cli';
import { useCliStage } from '../support/cli-stage';

const stage = useCliStage('prod');
const policy = JSON.parse(readFileSync(join(__dirname, '..', '..', 'infra', 'cli-policy.json'), 'utf8')) as { Statement: Array<{ Action: string[] }> };
const allowed = new Set(policy.Statement.flatMap((s) => s.Action));

let recorder: AwsRecorder;
let dir: string;
beforeAll(async () => {
  recorder = await startAwsRecorder({ dynamoEndpoint: stage.dynamo.endpoint, parameters: {}, authorize: (call) => allowed.has(call.action) });
  dir = tempConfigDir('aws: { stage: prod, region: eu-west-1 }\n', 'hookagent-held-ttl-');
});
afterAll(async () => {
  await recorder.close();
  rmSync(dir, { recursive: true, force: true });
});

const at = new Date(Date.now() - 3 * 24 * 3600 * 1000).toISOString();
const record = (eventId: string): EventRecord => ({
  event_id: eventId, subscription: 'holiday', status: 'queued', source: 'custom', event: 'e', delivery_id: `d-${eventId}`, received_at: at, updated_at: at,
  message: { v: 1, event_id: eventId, subscription: 'holiday', source: 'custom', event: 'e', delivery_id: `d-${eventId}`, received_at: at, payload: { n: eventId } },
});

async function ttl(key: Record<string, unknown>): Promise<string | undefined> {
  const { Item } = await stage.dynamo.client.send(new GetItemCommand({ TableName: stage.dynamo.tables.events, Key: key as never, ConsistentRead: true }));
  expect(Item).toBeDefined();
  return Item?.expires_at?.N;
}

test('pause of a paused subscription removes the TTL of its held records and their messages, says how many it kept, with the calls the CLI policy allows', async () => {
  const { client, tables } = stage.dynamo;
  await new DynamoSubscriptionStore(client, tables.subscriptions).create({
    name: 'holiday', events: [], skills: [], deliver: ['log'], state: 'paused', created_at: at, updated_at: at, secret: 'whsec_x',
  } as Subscription);
  // Queued with a TTL on both items, then set held by an update that leaves the TTL, as an earlier version's worker did.
  const events = new DynamoEventLog(client, tables.events);
  await events.putAll([record('evt_a'), record('evt_b')]);
  for (const id of ['evt_a', 'evt_b']) {
    await client.send(new UpdateItemCommand({
      TableName: tables.events, Key: marshall({ event_id: id, subscription: 'holiday' }), UpdateExpression: 'SET #s = :held',
      ExpressionAttributeNames: { '#s': 'status' }, ExpressionAttributeValues: { ':held': { S: 'held' } },
    }));
  }
  expect(await ttl(marshall({ event_id: 'evt_a', subscription: 'holiday' }))).toBeDefined();

  const result = await runCli(['--config-dir', dir, 'webhook', 'pause', 'holiday'], {
    ...stage.env(), AWS_ENDPOINT_URL_DYNAMODB: recorder.url, AWS_ENDPOINT_URL_SQS: recorder.url,
  });

  expect(result).toMatchObject({ code: 0, stderr: '' });
  expect(result.stdout.trim().split('\n')).toEqual([
    "'holiday' is already paused.", 'Kept 2 held event(s) from an earlier version that would have expired; they stay held until resume.',
  ]);
  const left = [];
  for (const id of ['evt_a', 'evt_b']) left.push(await ttl(marshall({ event_id: id, subscription: 'holiday' })), await ttl(messageKey(id, 'holiday')));
  expect(left).toEqual([undefined, undefined, undefined, undefined]);
  const made = [...new Set(recorder.calls.map((c) => c.action))];
  expect(made.filter((action) => !allowed.has(action))).toEqual([]);
  expect(made).toContain('dynamodb:PutItem');
}, 60_000);
