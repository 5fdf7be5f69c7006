/**
 * `webhook events <name> --status filtered` on an AWS stage (hunt 11 D3): a request the
 * subscription's payload filters turned away is listed from its copy in the request log,
 * written with the entry as ingest writes it, after more than 1,000 newer entries too. The
 * built CLI against a dynalite stage.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoRequestLog } from '../../functions/aws/request-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { systemClock } from '../../functions/core/ports';
import type { RequestRecord, Subscription } from '../../functions/core/types';
import { runCli } from '../support/cli';
import { useCliStage } from '../support/cli-stage';

const stage = useCliStage();

test('a filtered request is listed after 1,200 newer requests of the stage', async () => {
  const now = Date.now();
  const at = (ms: number): string => new Date(now - 3_600_000 + ms).toISOString();
  const big: Subscription = { name: 'big', events: ['issues.opened'], filters: ['issue.number > 100'], skills: [], deliver: ['log'], state: 'active', created_at: at(0), updated_at: at(0), secret: 'whsec_x' } as Subscription;
  await new DynamoSubscriptionStore(stage.dynamo.client, stage.dynamo.tables.subscriptions).create(big);
  const log = new DynamoRequestLog(stage.dynamo.client, stage.dynamo.tables.requests, systemClock, stage.dynamo.tables.dedup);
  const reason = 'filter "issue.number > 100" failed (issue.number is 7)';
  await log.record({
    request_id: 'req_filtered_7', received_at: at(1), endpoint: 'github', method: 'POST', status: 200, outcome: 'filtered', event: 'issues', action: 'opened',
    delivery_id: 'd-7', header_names: [], candidates: [{ subscription: 'big', matched: false, reason }],
  });
  const push = (i: number): RequestRecord => ({ request_id: `req_push_${i}`, received_at: at(10 + i), endpoint: 'github', method: 'POST', status: 200, outcome: 'not_handled', event: 'push', header_names: [], candidates: [] });
  for (let i = 0; i < 1200; i += 50) await Promise.all(Array.from({ length: 50 }, (_, j) => log.record(push(i + j))));

  const dir = mkdtempSync(join(tmpdir(), 'hookagent-filtered-aws-'));
  writeFileSync(join(dir, 'config.yaml'), 'aws: { region: eu-west-1, stage: prod }\n');
  const result = await runCli(['--config-dir', dir, 'webhook', 'events', 'big', '--status', 'filtered', '--json'], stage.env());
  expect(result).toMatchObject({ code: 0, stderr: '' });
  expect(JSON.parse(result.stdout)).toEqual([{ event_id: null, request_id: 'req_filtered_7', status: 'filtered', event: 'issues', action: 'opened', delivery_id: 'd-7', received_at: at(1), reason }]);
}, 120_000);
