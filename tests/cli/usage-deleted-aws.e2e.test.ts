/**
 * Hunt 10 (cliaws) D2: `webhook usage` on AWS counts deleted subscriptions as it does
 * locally. Their names come from a scan of the events table, which moved one page (1,000
 * records) per call: the console's refreshes carry it on, but a one-shot CLI run read the
 * first page only, so with more than 1,000 records the same deleted subscriptions were
 * missing from every run. `usage` now reads the scan to its end.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { openLocalRuntime } from '../../functions/local/compose';
import { systemClock } from '../../functions/core/ports';
import type { EventRecord, Subscription } from '../../functions/core/types';
import { runCli } from '../support/cli';
import { useCliStage } from '../support/cli-stage';

const stage = useCliStage();

const env = stage.env;

const now = Date.now();
const at = (i: number) => new Date(now - 3_600_000 + i).toISOString();
const DELETED = ['gone-a', 'gone-m', 'gone-z', 'old-1', 'zz-old'];

function record(subscription: string, i: number, tokens: number): EventRecord {
  const id = `evt_${subscription.replace(/[^a-z0-9]/g, '')}_${String(i).padStart(6, '0')}`;
  return {
    event_id: id, subscription, status: 'delivered', source: 'custom', event: 'deploy', delivery_id: id, received_at: at(i), updated_at: at(i),
    message: { v: 1, event_id: id, subscription, source: 'custom', event: 'deploy', delivery_id: id, received_at: at(i), payload: { n: i } },
    usage: { provider: 'openai', model: 'm', input_tokens: tokens, output_tokens: 0, steps: 1 },
  } as EventRecord;
}
const subscription = (name: string): Subscription => ({
  name, events: ['deploy'], skills: [], deliver: ['log'], state: 'active', created_at: at(0), updated_at: at(0), secret: 'whsec_x',
} as Subscription);

/** One defined subscription with 1,200 events of 1 token, and five deleted ones with one event of 100 tokens each. */
async function seed(create: (s: Subscription) => Promise<void>, events: { putAll(r: EventRecord[]): Promise<void> }): Promise<void> {
  await create(subscription('busy'));
  const records: EventRecord[] = [];
  for (let i = 0; i < 1200; i++) records.push(record('busy', i, 1));
  for (const gone of DELETED) records.push(record(gone, 5000, 100));
  for (let i = 0; i < records.length; i += 200) await events.putAll(records.slice(i, i + 200));
}

interface Report { total: { input_tokens: number }; rows: Array<{ subscription: string; input_tokens: number; deleted?: true }>; note?: string }

test('usage on an AWS stage with more than 1,000 records counts every deleted subscription, as locally', async () => {
  const localDir = mkdtempSync(join(tmpdir(), 'hookagent-usage-local-'));
  writeFileSync(join(localDir, 'config.yaml'), '');
  const runtime = await openLocalRuntime(join(localDir, 'data'), { role: 'cli', clock: systemClock });
  await seed((s) => runtime.subscriptions.create(s), runtime.events);
  await runtime.close();
  const local = await runCli(['--config-dir', localDir, 'webhook', 'usage', '--json']);
  expect(local.code).toBe(0);
  const localReport = JSON.parse(local.stdout) as Report;
  expect(localReport.total.input_tokens).toBe(1200 + 500);

  const awsDir = mkdtempSync(join(tmpdir(), 'hookagent-usage-aws-'));
  writeFileSync(join(awsDir, 'config.yaml'), 'aws: { region: eu-west-1, stage: prod }\n');
  await seed((s) => new DynamoSubscriptionStore(stage.dynamo.client, 'hookagent-prod-subscriptions').create(s), new DynamoEventLog(stage.dynamo.client, 'hookagent-prod-events'));
  const result = await runCli(['--config-dir', awsDir, 'webhook', 'usage', '--json'], env());
  expect(result).toMatchObject({ code: 0, stderr: '' });
  const report = JSON.parse(result.stdout) as Report;
  expect(report.note).toBeUndefined();
  expect(report.rows.map((r) => [r.subscription, r.input_tokens, r.deleted ?? false])).toEqual(localReport.rows.map((r) => [r.subscription, r.input_tokens, r.deleted ?? false]));
  expect(report.rows.filter((r) => r.deleted).map((r) => r.subscription).sort()).toEqual(DELETED);
  expect(report.total).toEqual(localReport.total);
  // The table says nothing about names still being looked up.
  const table = await runCli(['--config-dir', awsDir, 'webhook', 'usage'], env());
  expect(table.code).toBe(0);
  expect(table.stdout).toMatch(/^\(all\)\s+1205\s+1700\s/m);
  expect(table.stdout).not.toMatch(/may be missing|each refresh/);
}, 180_000);
