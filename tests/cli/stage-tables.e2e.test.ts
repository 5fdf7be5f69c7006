/**
 * Hunt 10 (cliaws) D1: config.yaml's `aws.tables` names the tables of `aws.stage` only.
 * `--stage <other>` acted on those tables (the subscriptions, events and dedup of
 * aws.stage) while its request log and queues were the other stage's: `--stage staging
 * webhook pause` paused prod's subscription. Now another stage uses hookagent-<stage>-*.
 */
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { deploymentTables } from '../../cli/context';
import { valid } from '../support/parse-config';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { tableDefinitions, tableNamesForStage } from '../../functions/aws/tables';
import type { Subscription } from '../../functions/core/types';
import { buildCli, runCli, tempConfigDir } from '../support/cli';
import { startDynalite, type TestDynamo } from '../support/dynalite';

const PROD_TABLES = { subscriptions: 'prod-subs', dedup: 'prod-dedup', events: 'prod-events' };
const CONFIG = 'aws: { region: eu-west-1, stage: prod, tables: { subscriptions: prod-subs, dedup: prod-dedup, events: prod-events } }\n';

let dynamo: TestDynamo;
beforeAll(async () => {
  buildCli();
  dynamo = await startDynalite('staging');
  for (const definition of tableDefinitions(tableNamesForStage('prod', PROD_TABLES))) await dynamo.client.send(new CreateTableCommand(definition));
}, 120_000);
afterAll(async () => dynamo.close());

const env = () => ({ AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint, AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'eu-west-1', AWS_MAX_ATTEMPTS: '1' });
const now = new Date().toISOString();
const sub = (name: string): Subscription => ({ name, events: ['push'], skills: [], deliver: ['log'], state: 'active', created_at: now, updated_at: now, secret: 'whsec_x' } as Subscription);

test('deploymentTables: aws.tables for aws.stage, hookagent-<stage>-* for any other stage', () => {
  const config = valid(CONFIG);
  expect(deploymentTables(config, 'prod')).toEqual({ ...PROD_TABLES, requests: 'hookagent-prod-requests' });
  expect(deploymentTables(config, 'staging')).toEqual(tableNamesForStage('staging'));
  expect(deploymentTables(valid(''), 'dev')).toEqual(tableNamesForStage('dev'));
});

test('--stage staging acts on staging\'s tables, not on those config.yaml names for aws.stage prod', async () => {
  const prod = new DynamoSubscriptionStore(dynamo.client, 'prod-subs');
  const staging = new DynamoSubscriptionStore(dynamo.client, 'hookagent-staging-subscriptions');
  await prod.create(sub('pr-review'));
  await staging.create(sub('pr-review'));
  const dir = tempConfigDir(CONFIG);

  const paused = await runCli(['--config-dir', dir, '--stage', 'staging', 'webhook', 'pause', 'pr-review'], env());
  expect(paused).toMatchObject({ code: 0, stderr: '' });
  expect((await staging.get('pr-review'))?.state).toBe('paused');
  expect((await prod.get('pr-review'))?.state).toBe('active');

  // aws.stage itself (from config.yaml, or named with --stage) still uses aws.tables.
  expect((await runCli(['--config-dir', dir, 'webhook', 'pause', 'pr-review'], env())).code).toBe(0);
  expect((await prod.get('pr-review'))?.state).toBe('paused');
  expect((await runCli(['--config-dir', dir, '--stage', 'prod', 'webhook', 'resume', 'pr-review'], env())).code).toBe(0);
  expect((await prod.get('pr-review'))?.state).toBe('active');
  expect((await staging.get('pr-review'))?.state).toBe('paused');
}, 60_000);
