/**
 * Hunt 13 (awsruntime, D2): a payload over 200 KB goes to S3 before anything is recorded.
 * When that PutObject fails, ingest answers 503 and must release the delivery id's claim
 * (README, "What accepted guarantees": "the delivery id is released so the sender's retry is
 * processed"): it was left pending, so every retry within the claim's minute was answered 503
 * `in_progress` although nothing was recorded or queued.
 */
import { DynamoDedupStore } from '../../functions/aws/dedup-store';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import type { FaultyAws } from '../support/faulty-aws';
import { useFaultyStage } from '../support/faulty-stage';
import { bodyOf } from '../support/ingest-harness';
import { githubEvent } from '../support/requests';

const stage = useFaultyStage({ deliveryTimeout: '2s' });
let aws: FaultyAws;

beforeAll(async () => {
  aws = stage.aws;
  const at = '2026-11-24T00:00:00Z';
  await new DynamoSubscriptionStore(stage.dynamo.client, stage.dynamo.tables.subscriptions).create({
    name: 'issues-to-chat', events: ['issues'], skills: [], deliver: ['messenger'], agent: 'none', state: 'active',
    created_at: at, updated_at: at, secret: 'whsec_x', prompt: 'Issue {issue.title}',
  });
});

const SLOW_DOWN = { status: 503, body: '<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>' };
const claimOf = (delivery: string) => new DynamoDedupStore(stage.dynamo.client, stage.dynamo.tables.dedup, { now: () => Date.now() }).inspect(`github#${delivery}`);

test('S3 refuses the large payload for a moment: 503 with the claim released, and the sender\'s retry right after is accepted', async () => {
  const { handler: ingest } = await import('../../functions/ingest/handler');
  const body = JSON.stringify({ action: 'opened', issue: { number: 7, title: 'big log', body: 'x'.repeat(300 * 1024) }, repository: { full_name: 'o/r' } });
  aws.hook = (call) => (call.service === 's3' ? SLOW_DOWN : undefined);
  const first = await ingest(githubEvent('issues', body, 'gh-secret', { 'x-github-delivery': 'big-1' }));
  expect([first.statusCode, bodyOf(first).code]).toEqual([503, 'unavailable']);
  // Released (claimed at 0): the next request for the delivery id takes it over, with its event id.
  const released = await claimOf('big-1');
  expect(released).toMatchObject({ committed: false, claimedAt: 0 });
  aws.hook = () => undefined;
  const retry = await ingest(githubEvent('issues', body, 'gh-secret', { 'x-github-delivery': 'big-1' }));
  expect([retry.statusCode, bodyOf(retry).status, bodyOf(retry).event_id]).toEqual([202, 'accepted', released?.eventId]);
  expect(aws.objects.size).toBe(1);
}, 60_000);
