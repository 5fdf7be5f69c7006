/**
 * With an `aws` section (or --stage), the CLI acts on that deployment's tables through the
 * standard AWS SDK configuration; here the SDK's endpoint variables point it at dynalite.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { buildCli, runCli } from '../support/cli';

let dynamo: TestDynamo;
beforeAll(async () => {
  buildCli();
  dynamo = await startDynalite('prod');
}, 60_000);
afterAll(async () => dynamo.close());

const env = () => ({ AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint, AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'eu-west-1' });

test('an aws section sends the CLI to hookagent-<stage>-* tables, not the local store', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-aws-'));
  writeFileSync(join(dir, 'config.yaml'), 'aws: { region: eu-west-1, stage: prod }\n');
  const result = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'remote', '--events', 'push'], env());
  expect(result).toMatchObject({ code: 0, stderr: '' });
  const stored = await new DynamoSubscriptionStore(dynamo.client, 'hookagent-prod-subscriptions').get('remote');
  expect(stored).toMatchObject({ name: 'remote', events: ['push'] });
  const list = await runCli(['--config-dir', dir, 'webhook', 'list', '--json'], env());
  expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ name: 'remote' })]);
});

test('--stage and --region select a deployment without an aws section; a missing table is a clear error', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-aws-'));
  const ok = await runCli(['--config-dir', dir, '--stage', 'prod', '--region', 'eu-west-1', 'webhook', 'show', 'remote', '--json'], env());
  expect(ok.code).toBe(0);
  const missing = await runCli(['--config-dir', dir, '--stage', 'staging', 'webhook', 'list'], env());
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain('The subscription store is unavailable');
});
