/**
 * Hunt 3, D4, D5, D6, D7, D9: `osls package` (no AWS credentials) takes the stage, region and
 * table names from config.yaml's `aws` section, as the CLI does; allows the worker the Bedrock
 * models subscriptions may name (agent.models); and stops on a configuration it cannot
 * deploy with one clear message, no stack trace.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tableNamesForStage } from '../../functions/aws/tables';
import { oneBuildAtATime } from '../support/exclusive';

const ROOT = join(__dirname, '..', '..');
const OSLS = join(ROOT, 'node_modules', 'osls', 'bin', 'serverless.js');
const run = promisify(execFile);

/** Packages with `config.yaml` (none when undefined) and `args`; the output directory, or what osls printed when it failed. */
async function packageWith(yaml: string | undefined, args: string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-deploy-config-'));
  if (yaml !== undefined) writeFileSync(join(dir, 'config.yaml'), yaml);
  const out = join(dir, 'out');
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('AWS_')) env[key] = value;
  const home = mkdtempSync(join(tmpdir(), 'hookagent-home-'));
  Object.assign(env, {
    HOME: home, HOOKAGENT_CONFIG_DIR: dir, AWS_CONFIG_FILE: join(home, 'none'), AWS_SHARED_CREDENTIALS_FILE: join(home, 'none'),
    AWS_EC2_METADATA_DISABLED: 'true', SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off',
  });
  const result = await oneBuildAtATime(() => run(process.execPath, [OSLS, 'package', '--package', out, ...args], { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024 })).then(
    ({ stdout, stderr }) => ({ code: 0, output: `${stdout}\n${stderr}` }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: `${error.stdout}\n${error.stderr}` }),
  );
  return { ...result, out };
}

const template = (out: string) => JSON.parse(readFileSync(join(out, 'cloudformation-template-update-stack.json'), 'utf8')) as { Resources: Record<string, { Type: string; Properties: Record<string, any> }> };
const state = (out: string) => (JSON.parse(readFileSync(join(out, 'serverless-state.json'), 'utf8')) as { service: { provider: { stage: string; region: string } } }).service.provider;

test('without --stage and --region: config.yaml\'s aws.stage, aws.region and aws.tables, the names the CLI uses', async () => {
  const tables = { subscriptions: 'my-subscriptions', dedup: 'my-dedup', events: 'my-events' };
  const packaged = await packageWith(`aws: { region: eu-central-1, stage: qa, tables: { subscriptions: my-subscriptions, dedup: my-dedup, events: my-events } }\n`);
  expect(packaged.output).toContain('for stage qa (eu-central-1)');
  expect(packaged.code).toBe(0);
  expect(state(packaged.out)).toMatchObject({ stage: 'qa', region: 'eu-central-1' });
  const resources = template(packaged.out).Resources;
  const names = Object.fromEntries(['SubscriptionsTable', 'DedupTable', 'EventsTable', 'RequestsTable'].map((id) => [id, resources[id]!.Properties.TableName]));
  // The CLI's names (cli/context.ts): aws.tables over hookagent-<stage>-….
  const cli = tableNamesForStage('qa', tables);
  expect(names).toEqual({ SubscriptionsTable: cli.subscriptions, DedupTable: cli.dedup, EventsTable: cli.events, RequestsTable: cli.requests });
  expect(names.RequestsTable).toBe('hookagent-qa-requests');
  expect(resources.EventQueue!.Properties.QueueName).toBe('hookagent-qa-queue');
  // The functions find them through the template's references.
  expect(resources.WorkerLambdaFunction!.Properties.Environment.Variables).toMatchObject({ SUBSCRIPTIONS_TABLE: { Ref: 'SubscriptionsTable' }, HOOKAGENT_STAGE: 'qa' });
}, 120_000);

test('--stage other than aws.stage: a warning; with aws.tables (that stage\'s tables) a clear refusal', async () => {
  const warned = await packageWith('aws: { region: eu-central-1, stage: qa }\n', ['--stage', 'staging']);
  expect(warned.code).toBe(0);
  expect(warned.output).toContain("packaging for stage 'staging', but config.yaml's aws.stage is 'qa': the CLI acts on 'qa' unless given --stage staging");
  expect(template(warned.out).Resources.SubscriptionsTable!.Properties.TableName).toBe('hookagent-staging-subscriptions');
  const refused = await packageWith('aws: { stage: qa, tables: { subscriptions: my-subscriptions } }\n', ['--stage', 'staging', '--region', 'eu-west-1']);
  expect(refused.code).not.toBe(0);
  expect(refused.output).toContain("config.yaml's aws.tables names the tables of stage 'qa'; packaging stage 'staging' would use the same tables");
  expect(refused.output).not.toMatch(/^\s+at /m);
}, 120_000);

test('Bedrock: the worker may invoke agent.model and each of agent.models (the models subscriptions may name)', async () => {
  const packaged = await packageWith('agent: { provider: bedrock, model: eu.anthropic.claude-sonnet-4-20250514-v1:0, models: [anthropic.claude-3-haiku-20240307-v1:0] }\n', ['--stage', 'test', '--region', 'eu-west-1']);
  expect(packaged.code).toBe(0);
  const statements = (template(packaged.out).Resources.WorkerRole!.Properties.Policies as any[]).flatMap((p) => p.PolicyDocument.Statement);
  const runAgent = statements.find((s: any) => s['Fn::If'])['Fn::If'][1];
  expect(runAgent.Resource).toEqual([
    { 'Fn::Sub': 'arn:${AWS::Partition}:bedrock:${AWS::Region}:${AWS::AccountId}:inference-profile/eu.anthropic.claude-sonnet-4-20250514-v1:0' },
    { 'Fn::Sub': 'arn:${AWS::Partition}:bedrock:*::foundation-model/anthropic.claude-sonnet-4-20250514-v1:0' },
    { 'Fn::Sub': 'arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/anthropic.claude-3-haiku-20240307-v1:0' },
  ]);
}, 120_000);

describe('a configuration packaging cannot deploy: one clear message naming the key, no stack trace', () => {
  test.each([
    ['agent: { provider: [bedrock }\n', 'config.yaml is not valid YAML at line 1'],
    ['agent: { provider: bedrock }\n', 'agent.model: is required'],
    ['agent: { provider: bedrock, model: anthropic.claude-3-haiku-20240307-v1:0, models: [\'${MODEL}\'] }\n', 'agent.models[0]: must name the Bedrock model literally'],
    ['webhooks: { unknown_key: 1 }\n', 'webhooks.unknown_key: unknown key'],
    [undefined, 'Cannot package: no config.yaml in'],
  ])('%s', async (yaml, message) => {
    const failed = await packageWith(yaml, ['--stage', 'test', '--region', 'eu-west-1']);
    expect(failed.code).not.toBe(0);
    expect(failed.output).toContain(message);
    expect(failed.output).not.toMatch(/^\s+at /m);
    expect(failed.output).not.toContain('Command failed');
  }, 60_000);

  test('no config.yaml on purpose: --param="allowEmptyConfig=true" packages the defaults and says so', async () => {
    const packaged = await packageWith(undefined, ['--stage', 'test', '--region', 'eu-west-1', '--param=allowEmptyConfig=true']);
    expect(packaged.code).toBe(0);
    expect(packaged.output).toContain('with the defaults (no config.yaml in');
    expect(packaged.output).toContain('warning: no config.yaml in');
  }, 60_000);
});
