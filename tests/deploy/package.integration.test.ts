/**
 * `osls package --stage test` on a machine without AWS credentials: the generated
 * CloudFormation template and the function artifacts, as AWS would receive them.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { build, type BuildOptions } from 'esbuild';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { tableDefinitions, tableNamesForStage } from '../../functions/aws/tables';
import { WORKER_TIMEOUT_SECONDS } from '../../functions/aws/limits';
import { apiEvent } from '../support/requests';
import { readZip } from '../support/zip';
import { DynamoLeaseStore } from '../../functions/aws/lease-store';
import { DynamoDedupStore } from '../../functions/aws/dedup-store';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { eventRecord } from '../../functions/core/worker/record';
import type { QueueMessage } from '../../functions/core/types';
import { signHub } from '../../functions/core/auth/signatures';
import { parseConfig } from '../../functions/core/config/load';
import { preparedConfigText } from '../../functions/core/config/prepared';
import { toSqsRecord } from '../../functions/local/consumer';
import { startAwsRecorder, type AwsCall, type AwsRecorder } from '../support/aws-recorder';
import { iamMatches } from '../support/iam';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { startFakeCodehost, type FakeCodehost } from '../support/fake-codehost';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { newEventId } from '../../functions/core/ids';
import { oneBuildAtATime } from '../support/exclusive';

const ROOT = join(__dirname, '..', '..');
const OSLS = join(ROOT, 'node_modules', 'osls', 'bin', 'serverless.js');
const run = promisify(execFile);

/** Values set in the packaging environment; none may reach the template or the artifacts. */
const CANARIES = {
  GITHUB_WEBHOOK_SECRET: 'canary-github-webhook-secret-1f2e',
  GITLAB_WEBHOOK_SECRET: 'canary-gitlab-webhook-secret-3d4c',
  OPENAI_API_KEY: 'sk-canary-openai-key-5b6a',
  SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/CANARY/CANARY/canary7890',
  GITHUB_TOKEN: 'ghp_canaryGithubToken9a8b',
};

const CONFIG = `webhooks:
  github: { secret: \${GITHUB_WEBHOOK_SECRET} }
  gitlab: { secret: \${GITLAB_WEBHOOK_SECRET} }
  max_payload_size: 4MB
agent: { provider: openai, model: gpt-test, api_key: \${OPENAI_API_KEY}, base_url: \${OPENAI_BASE_URL}, timeout: 120s }
delivery:
  teamchat: { provider: slack, webhook_url: \${SLACK_WEBHOOK_URL} }
  codehost:
    github: { token: \${GITHUB_TOKEN}, api_url: \${GITHUB_API_URL} }
`;

const SKILL = `---
name: release-notes
description: Summarises a release for the team.
---
Write three bullet points.
`;

function configDir(yaml: string, withSkill = false): string {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-deploy-'));
  writeFileSync(join(dir, 'config.yaml'), yaml);
  if (withSkill) {
    mkdirSync(join(dir, 'skills', 'release-notes'), { recursive: true });
    writeFileSync(join(dir, 'skills', 'release-notes', 'SKILL.md'), SKILL);
  }
  return dir;
}

/** No credentials anywhere the SDK or osls would look; an isolated HOME. */
function packagingEnv(dir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('AWS_')) env[key] = value;
  const home = mkdtempSync(join(tmpdir(), 'hookagent-home-'));
  return {
    ...env, ...CANARIES, HOME: home, HOOKAGENT_CONFIG_DIR: dir,
    AWS_CONFIG_FILE: join(home, 'no-config'), AWS_SHARED_CREDENTIALS_FILE: join(home, 'no-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true', SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off',
  };
}

function packageService(dir: string, out: string) {
  return oneBuildAtATime(() => run(process.execPath, [OSLS, 'package', '--stage', 'test', '--region', 'eu-west-1', '--package', out], {
    cwd: ROOT, env: packagingEnv(dir), maxBuffer: 16 * 1024 * 1024,
  }));
}

type Resource = { Type: string; Properties: Record<string, any>; Condition?: string };
let template: { Resources: Record<string, Resource>; Outputs: Record<string, unknown> };
let templateText: string;
let out: string;

const resources = (type: string) => Object.entries(template.Resources).filter(([, r]) => r.Type === type);
const resource = (id: string): Resource => {
  const found = template.Resources[id];
  if (!found) throw new Error(`no resource ${id}`);
  return found;
};

/** Every action a role's inline policies allow. */
function roleActions(roleId: string): string[] {
  return roleStatements(roleId).filter((s) => s.Effect === 'Allow').flatMap((s) => [s.Action].flat()).sort();
}

/** A role's statements; one under `Fn::If` counts as its present branch. */
function roleStatements(roleId: string): any[] {
  return (resource(roleId).Properties.Policies as any[]).flatMap((p) => p.PolicyDocument.Statement as any[])
    .map((st) => (st['Fn::If'] ? st['Fn::If'][1] : st));
}

/** The config dir packaged: config.yaml and one user skill. */
let packagedDir: string;
/** What `hookagent status` compares: config.yaml and the user skills packaging bundled. */
const deployedHash = () => (require('../../infra/deploy-config.cjs') as { deploymentHash(dir: string): string }).deploymentHash(packagedDir);

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'hookagent-package-'));
  packagedDir = configDir(CONFIG, true);
  await packageService(packagedDir, out);
  templateText = readFileSync(join(out, 'cloudformation-template-update-stack.json'), 'utf8');
  template = JSON.parse(templateText);
}, 180_000);

test('the template declares the service: functions, API, queue and dead letters, tables, bucket, roles, alarms', () => {
  const types = Object.values(template.Resources).map((r) => r.Type);
  for (const type of [
    'AWS::Lambda::Function', 'AWS::Lambda::EventSourceMapping', 'AWS::ApiGatewayV2::Api', 'AWS::ApiGatewayV2::Route',
    'AWS::SQS::Queue', 'AWS::DynamoDB::Table', 'AWS::S3::Bucket', 'AWS::IAM::Role', 'AWS::CloudWatch::Alarm', 'AWS::SNS::Topic',
  ]) expect(types).toContain(type);
  expect(resources('AWS::Lambda::Function').map(([id]) => id).sort()).toEqual(['IngestLambdaFunction', 'WorkerLambdaFunction']);
  expect(resources('AWS::DynamoDB::Table')).toHaveLength(tableDefinitions(tableNamesForStage('test')).length);
  expect(resources('AWS::SQS::Queue')).toHaveLength(2);
  expect(template.Outputs).toHaveProperty('HttpApiUrl');
});

test('ingest: arm64, Node 22 or newer, small memory, timeout well under API Gateway\'s 30 s', () => {
  const ingest = resource('IngestLambdaFunction').Properties;
  expect(ingest.Architectures).toEqual(['arm64']);
  expect(ingest.Runtime).toMatch(/^nodejs(2[2-9]|[3-9]\d)\.x$/);
  expect(ingest.MemorySize).toBeLessThanOrEqual(512);
  expect(ingest.Timeout).toBeLessThanOrEqual(10);
  expect(ingest.Handler).toBe('dist/lambda/ingest/index.handler');
  expect(ingest.Environment.Variables).toMatchObject({
    HOOKAGENT_STAGE: 'test', HOOKAGENT_CONFIG_DIR: '/var/task/dist/lambda/ingest/config',
    QUEUE_URL: { Ref: 'EventQueue' }, PAYLOAD_BUCKET: { Ref: 'PayloadBucket' }, EVENTS_TABLE: { Ref: 'EventsTable' },
  });
  // Ingest never touches the dead-letter queue: it is not told where it is.
  expect(ingest.Environment.Variables.DEAD_LETTER_QUEUE_URL).toBeUndefined();
  expect(ingest.Role).toEqual({ 'Fn::GetAtt': ['IngestRole', 'Arn'] });
});

test('worker: timeout sized for agent runs; SQS mapping reports partial batch failures with a batch size and window', () => {
  const worker = resource('WorkerLambdaFunction').Properties;
  expect(worker.Architectures).toEqual(['arm64']);
  expect(worker.Timeout).toBe(WORKER_TIMEOUT_SECONDS);
  expect(worker.Role).toEqual({ 'Fn::GetAtt': ['WorkerRole', 'Arn'] });
  expect(worker.Environment.Variables).toMatchObject({ DEAD_LETTER_QUEUE_URL: { Ref: 'DeadLetterQueue' }, MAX_RECEIVE_COUNT: '5' });
  const [[, mapping]] = resources('AWS::Lambda::EventSourceMapping') as [[string, Resource]];
  expect(mapping.Properties).toMatchObject({
    EventSourceArn: { 'Fn::GetAtt': ['EventQueue', 'Arn'] },
    FunctionName: { 'Fn::GetAtt': ['WorkerLambdaFunction', 'Arn'] },
    FunctionResponseTypes: ['ReportBatchItemFailures'],
    BatchSize: 10,
  });
  expect(mapping.Properties.MaximumBatchingWindowInSeconds).toBeGreaterThan(0);
  expect(mapping.Properties.ScalingConfig.MaximumConcurrency).toBeGreaterThanOrEqual(2);
});

test('queue: explicit message size, visibility ≥ 6 × the worker timeout, redrive to a 14-day dead-letter queue', () => {
  const queue = resource('EventQueue').Properties;
  expect(queue.QueueName).toBe('hookagent-test-queue');
  expect(queue.MaximumMessageSize).toBe(262144);
  expect(queue.VisibilityTimeout).toBeGreaterThanOrEqual(6 * resource('WorkerLambdaFunction').Properties.Timeout);
  expect(queue.RedrivePolicy).toEqual({ deadLetterTargetArn: { 'Fn::GetAtt': ['DeadLetterQueue', 'Arn'] }, maxReceiveCount: 5 });
  const dlq = resource('DeadLetterQueue').Properties;
  expect(dlq.MessageRetentionPeriod).toBe(14 * 24 * 3600);
  expect(queue.MessageRetentionPeriod).toBeLessThan(dlq.MessageRetentionPeriod);
  expect(queue.SqsManagedSseEnabled).toBe(true);
  expect(dlq.SqsManagedSseEnabled).toBe(true);
});

test('tables: the keys the code uses, on demand, TTL where the design says, point-in-time recovery, encryption', () => {
  const names = tableNamesForStage('test');
  const ttl: Record<string, boolean> = { [names.subscriptions]: false, [names.dedup]: true, [names.events]: true, [names.requests]: true };
  for (const expected of tableDefinitions(names)) {
    const [, table] = resources('AWS::DynamoDB::Table').find(([, r]) => r.Properties.TableName === expected.TableName) ?? [];
    expect(table).toBeDefined();
    const p = table!.Properties;
    expect(p.BillingMode).toBe('PAY_PER_REQUEST');
    expect(p.KeySchema).toEqual(expected.KeySchema);
    expect(p.AttributeDefinitions).toEqual(expected.AttributeDefinitions);
    expect(p.GlobalSecondaryIndexes ?? []).toEqual(expected.GlobalSecondaryIndexes ?? []);
    expect(p.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(p.SSESpecification).toEqual({ SSEEnabled: true });
    if (ttl[expected.TableName as string]) expect(p.TimeToLiveSpecification).toEqual({ AttributeName: 'expires_at', Enabled: true });
    else expect(p.TimeToLiveSpecification).toBeUndefined();
  }
});

test('payload bucket: private, encrypted, TLS only, objects expire', () => {
  const bucket = resource('PayloadBucket').Properties;
  expect(bucket.PublicAccessBlockConfiguration).toEqual({ BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true });
  expect(bucket.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm).toBe('AES256');
  expect(bucket.LifecycleConfiguration.Rules[0]).toMatchObject({ Status: 'Enabled', ExpirationInDays: 15 });
  const policy = resource('PayloadBucketPolicy').Properties.PolicyDocument.Statement[0];
  expect(policy).toMatchObject({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } });
});

test('IAM: one role per function, each with only the actions its code calls', () => {
  expect(resources('AWS::IAM::Role').map(([id]) => id).sort()).toEqual(['IngestRole', 'WorkerRole']);
  expect(roleActions('IngestRole')).toEqual([
    'dynamodb:BatchWriteItem', 'dynamodb:BatchWriteItem', 'dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:PutItem', 'dynamodb:PutItem',
    'dynamodb:Query', 'dynamodb:Scan', 'dynamodb:UpdateItem',
    'logs:CreateLogStream', 'logs:PutLogEvents', 's3:PutObject', 's3:PutObjectTagging', 'sqs:SendMessage', 'ssm:GetParameter',
    'xray:PutTelemetryRecords', 'xray:PutTraceSegments',
  ]);
  // The packaged config uses OpenAI: the Bedrock statement is present only under UsesBedrock, which is false.
  expect(roleActions('WorkerRole')).toEqual([
    'bedrock:InvokeModel', 'dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:GetItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:UpdateItem',
    'logs:CreateLogStream', 'logs:PutLogEvents', 's3:GetObject', 's3:PutObject', 's3:PutObjectTagging',
    'sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:ReceiveMessage', 'sqs:SendMessage', 'ssm:GetParameter',
    'xray:PutTelemetryRecords', 'xray:PutTraceSegments',
  ]);
  expect((template as any).Conditions.UsesBedrock).toEqual({ 'Fn::Equals': ['false', 'true'] });
  // Every statement names its resources; the only wildcards are within this stage's parameters and Bedrock models.
  for (const role of ['IngestRole', 'WorkerRole']) {
    const statements = roleStatements(role);
    for (const statement of statements) {
      // X-Ray's write actions accept no resource but '*'.
      if (statement.Sid !== 'Tracing') expect(statement.Resource).not.toBe('*');
      else expect(statement.Action).toEqual(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']);
      expect([statement.Action].flat().every((a: string) => !a.includes('*'))).toBe(true);
    }
    const ssm = statements.find((s: any) => s.Sid === 'ReadSecrets');
    expect(ssm.Resource['Fn::Sub']).toMatch(/:parameter\/hookagent\/test\/\*$/);
  }
  const sqsReaders = resources('AWS::IAM::Role').filter(([id]) => roleActions(id).includes('sqs:ReceiveMessage')).map(([id]) => id);
  expect(sqsReaders).toEqual(['WorkerRole']);
});

test('API routes: the endpoints of the contract, and everything else to ingest for its JSON 404/405', () => {
  const routes = resources('AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties.RouteKey).sort();
  expect(routes).toEqual(['$default', 'GET /health', 'POST /webhooks/custom/{name}', 'POST /webhooks/github', 'POST /webhooks/gitlab']);
  const integrations = resources('AWS::ApiGatewayV2::Integration');
  expect(integrations).toHaveLength(1);
  expect(integrations[0]?.[1].Properties.PayloadFormatVersion).toBe('2.0');
});

test('alarms: dead-letter queue not empty and worker errors, to a topic with an optional e-mail subscription', () => {
  const alarms = Object.fromEntries(resources('AWS::CloudWatch::Alarm').map(([, r]) => [r.Properties.MetricName + ':' + JSON.stringify(r.Properties.Dimensions[0].Value), r.Properties]));
  expect(alarms['ApproximateNumberOfMessagesVisible:{"Fn::GetAtt":["DeadLetterQueue","QueueName"]}']).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', AlarmActions: [{ Ref: 'AlarmTopic' }] });
  expect(alarms['Errors:{"Ref":"WorkerLambdaFunction"}']).toMatchObject({ Threshold: 0, AlarmActions: [{ Ref: 'AlarmTopic' }] });
  expect(resource('AlarmEmailSubscription').Condition).toBe('HasAlarmEmail');
});

test('operations (issue 20): alarms on 5xx, queue age, dead letters, worker errors and throttles, agent failures; one topic; a dashboard', () => {
  const alarms = new Map(resources('AWS::CloudWatch::Alarm').map(([, r]) => [`${r.Properties.Namespace}/${r.Properties.MetricName}`, r.Properties]));
  for (const key of ['AWS/ApiGateway/5xx', 'AWS/SQS/ApproximateAgeOfOldestMessage', 'AWS/SQS/ApproximateNumberOfMessagesVisible', 'AWS/Lambda/Errors', 'AWS/Lambda/Throttles', 'hookagent/AgentFailures']) {
    expect(alarms.get(key)).toMatchObject({ AlarmActions: [{ Ref: 'AlarmTopic' }] });
  }
  expect(alarms.get('AWS/ApiGateway/5xx')!.Dimensions).toEqual([{ Name: 'ApiId', Value: { Ref: 'HttpApi' } }, { Name: 'Stage', Value: '$default' }]);
  expect(alarms.get('AWS/SQS/ApproximateAgeOfOldestMessage')).toMatchObject({ Threshold: 900, Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': ['EventQueue', 'QueueName'] } }] });
  // The EMF metric's dimension set, exactly as functions/aws/emf-metrics.ts emits it.
  expect(alarms.get('hookagent/AgentFailures')!.Dimensions).toEqual([{ Name: 'service', Value: 'hookagent-worker' }, { Name: 'stage', Value: 'test' }]);
  expect(resources('AWS::SNS::Topic')).toHaveLength(1);
  expect(resource('AlarmEmailSubscription').Properties).toMatchObject({ Protocol: 'email', TopicArn: { Ref: 'AlarmTopic' } });
  const dashboard = resource('Dashboard').Properties;
  expect(dashboard.DashboardName).toBe('hookagent-test');
  const [body, values] = dashboard.DashboardBody['Fn::Sub'] as [string, Record<string, unknown>];
  const filled = body.replace(/\$\{([A-Za-z:]+)\}/g, (_, name: string) => (typeof values[name] === 'string' ? (values[name] as string) : `<${name}>`));
  const widgets = JSON.parse(filled).widgets as Array<{ properties: { metrics: unknown[] } }>;
  const named = JSON.stringify(widgets.map((w) => w.properties.metrics));
  for (const metric of ['Requests', '5xx', 'ApproximateAgeOfOldestMessage', 'Throttles', 'Retries', 'DeadLetters', 'AgentFailures', 'QueueToStartLatency', 'AgentDuration', 'Tokens', 'Deliveries']) expect(named).toContain(metric);
});

test('every alarm tells the topic when it fires and when it recovers (an on-call paged by one alarm hears it end)', () => {
  const alarms = resources('AWS::CloudWatch::Alarm').map(([id, r]) => [id, r.Properties] as const);
  expect(alarms.length).toBeGreaterThanOrEqual(7);
  const missing = alarms.filter(([, p]) => JSON.stringify(p.OKActions) !== JSON.stringify([{ Ref: 'AlarmTopic' }])).map(([id]) => id);
  expect(missing).toEqual([]);
  for (const [, p] of alarms) expect(p.AlarmActions).toEqual([{ Ref: 'AlarmTopic' }]);
});

test('edge and data protection (issue 20): stage throttling, reserved ingest concurrency, retained subscriptions, tracing, nodejs24.x', () => {
  expect(resource('HttpApiStage').Properties.DefaultRouteSettings).toEqual({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 });
  const ingest = resource('IngestLambdaFunction').Properties;
  const worker = resource('WorkerLambdaFunction').Properties;
  expect(ingest.ReservedConcurrentExecutions).toBe(20);
  for (const fn of [ingest, worker]) {
    expect(fn.Runtime).toBe('nodejs24.x');
    expect(fn.TracingConfig).toEqual({ Mode: 'Active' });
    expect(fn.Environment.Variables).toMatchObject({ POWERTOOLS_METRICS_NAMESPACE: 'hookagent', HOOKAGENT_CONFIG_HASH: deployedHash() });
  }
  const table = template.Resources.SubscriptionsTable as Resource & { DeletionPolicy?: string; UpdateReplacePolicy?: string };
  expect(table.DeletionPolicy).toBe('Retain');
  expect(table.UpdateReplacePolicy).toBe('Retain');
  expect(table.Properties.DeletionProtectionEnabled).toBe(true);
  expect(template.Outputs).toMatchObject({ ConfigHash: { Value: deployedHash() }, Stage: { Value: 'test' } });
  // The user skill counts: editing it after the deployment shows as drift.
  expect(deployedHash()).not.toBe(createHash('sha256').update(CONFIG).digest('hex'));
  expect(template.Outputs).toHaveProperty('DashboardUrl');
});

test('Bedrock permissions (issue 20): the configured model and its inference profile, nothing wider', () => {
  const { computeBedrockResources } = require('../../infra/deploy-config.cjs') as { computeBedrockResources(text: string): unknown[] };
  expect(computeBedrockResources(CONFIG)).toEqual([]);
  expect(computeBedrockResources('agent: { provider: bedrock, model: anthropic.claude-3-haiku-20240307-v1:0 }')).toEqual([
    { 'Fn::Sub': 'arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/anthropic.claude-3-haiku-20240307-v1:0' },
  ]);
  expect(computeBedrockResources('agent: { provider: bedrock, model: eu.anthropic.claude-sonnet-4-v1:0, region: eu-central-1 }')).toEqual([
    { 'Fn::Sub': 'arn:${AWS::Partition}:bedrock:eu-central-1:${AWS::AccountId}:inference-profile/eu.anthropic.claude-sonnet-4-v1:0' },
    { 'Fn::Sub': 'arn:${AWS::Partition}:bedrock:*::foundation-model/anthropic.claude-sonnet-4-v1:0' },
  ]);
  expect(() => computeBedrockResources('agent: { provider: bedrock, model: ${MODEL} }')).toThrow(/literally/);
  const statement = (resource('WorkerRole').Properties.Policies as any[]).flatMap((p) => p.PolicyDocument.Statement).find((st: any) => st['Fn::If']);
  expect(statement['Fn::If'][0]).toBe('UsesBedrock');
  expect(statement['Fn::If'][2]).toEqual({ Ref: 'AWS::NoValue' });
  expect(JSON.stringify(template)).not.toContain('foundation-model/*');
});

test('no secret value appears in the template or the artifacts; config.yaml (prepared) and user skills are packaged', () => {
  const ingest = readZip(join(out, 'ingest.zip'));
  const worker = readZip(join(out, 'worker.zip'));
  expect([...ingest.keys()].sort()).toEqual(['dist/lambda/ingest/config/config.json', 'dist/lambda/ingest/index.js', 'dist/lambda/ingest/index.js.map', 'dist/lambda/ingest/node_modules/re2js/index.js']);
  expect([...worker.keys()].sort()).toEqual([
    'dist/lambda/worker/config/config.json', 'dist/lambda/worker/config/skills.json', 'dist/lambda/worker/index.js', 'dist/lambda/worker/index.js.map',
    'dist/lambda/worker/node_modules/hookagent-octokit/index.js', 'dist/lambda/worker/node_modules/hookagent-octokit/index.js.map',
    'dist/lambda/worker/node_modules/re2js/index.js',
  ]);
  // config.yaml as the CLI's loader reads it (parsed, validated, normalised; references kept), for both functions.
  const parsed = parseConfig(CONFIG);
  if (!parsed.ok) throw new Error(parsed.error.message);
  expect(ingest.get('dist/lambda/ingest/config/config.json')?.toString()).toBe(preparedConfigText(parsed.value));
  expect(worker.get('dist/lambda/worker/config/config.json')?.toString()).toBe(preparedConfigText(parsed.value));
  // The user's skill beside the built-in ones, parsed as SkillLibrary parses it.
  const prepared = JSON.parse(worker.get('dist/lambda/worker/config/skills.json')!.toString()) as { skills: Record<string, { skill?: { name: string; origin: string; instructions: string } }> };
  expect(Object.keys(prepared.skills).sort()).toEqual(['alert-triage', 'code-review', 'issue-triage', 'release-notes']);
  expect(prepared.skills['release-notes']?.skill).toMatchObject({ name: 'release-notes', origin: 'user' });
  expect(SKILL).toContain(prepared.skills['release-notes']!.skill!.instructions);
  // So neither bundle carries the YAML parser or the config schema's validator (issue 20: cold-start size).
  for (const [zip, fn] of [[ingest, 'ingest'], [worker, 'worker']] as const) {
    const sources = (JSON.parse(zip.get(`dist/lambda/${fn}/index.js.map`)!.toString()) as { sources: string[] }).sources;
    expect(sources.filter((source) => /node_modules\/js-yaml\/|config-validator\.generated|config\/normalise|skills\/skill\.ts|SKILL\.md/.test(source))).toEqual([]);
    expect(sources.some((source) => source.endsWith('config/prepared.ts'))).toBe(true);
    // octokit ships beside the worker (node_modules/hookagent-octokit), loaded at the first GitHub call.
    expect(sources.filter((source) => /node_modules\/(@octokit|bottleneck)\//.test(source))).toEqual([]);
  }
  // The worker's composition imports nothing of ingest's: none of the ingest path, nor ipaddr.js (allowed_ips).
  const workerSources = (JSON.parse(worker.get('dist/lambda/worker/index.js.map')!.toString()) as { sources: string[] }).sources;
  expect(workerSources.filter((source) => /node_modules\/ipaddr\.js\/|core\/ingest\/|aws\/compose-ingest/.test(source))).toEqual([]);
  const ingestSources = (JSON.parse(ingest.get('dist/lambda/ingest/index.js.map')!.toString()) as { sources: string[] }).sources;
  expect(ingestSources.some((source) => /node_modules\/ipaddr\.js\//.test(source))).toBe(true);
  const octokitSources = (JSON.parse(worker.get('dist/lambda/worker/node_modules/hookagent-octokit/index.js.map')!.toString()) as { sources: string[] }).sources;
  expect(octokitSources.filter((source) => !/node_modules\/|octokit-vendor\.ts$/.test(source))).toEqual([]);
  expect(worker.get('dist/lambda/worker/index.js')!.toString()).toContain('require("hookagent-octokit")');
  const everything = [templateText, readFileSync(join(out, 'serverless-state.json'), 'utf8'), ...[...ingest.values(), ...worker.values()].map((b) => b.toString('utf8'))];
  for (const text of everything) for (const value of Object.values(CANARIES)) expect(text.includes(value)).toBe(false);
  // Minified (long lines; only template literals keep their newlines), with its source map beside it.
  for (const [zip, fn] of [[ingest, 'ingest'], [worker, 'worker']] as const) {
    const code = zip.get(`dist/lambda/${fn}/index.js`)!.toString();
    expect(code.length / code.split('\n').length).toBeGreaterThan(2000);
    expect(code.trimEnd().endsWith('//# sourceMappingURL=index.js.map')).toBe(true);
  }
});

test('cold starts (issue 20): the SDK resolved through its ES modules, source maps without sources, ingest ≤ 800 KB', () => {
  for (const fn of ['ingest', 'worker'] as const) {
    const zip = readZip(join(out, `${fn}.zip`));
    const map = JSON.parse(zip.get(`dist/lambda/${fn}/index.js.map`)!.toString()) as { sources: string[]; sourcesContent?: unknown };
    expect(map.sourcesContent).toBeUndefined();
    const sdk = map.sources.filter((source) => source.includes('@aws-sdk/client-') && source.endsWith('.js'));
    expect(sdk.length).toBeGreaterThan(0);
    expect(sdk.filter((source) => !source.includes('/dist-es/'))).toEqual([]);
    // Only the commands the code sends, not each client's aggregated class with every command.
    expect(map.sources.filter((source) => /@aws-sdk\/client-(ssm|s3)\/dist-es\/(SSM|S3)\.js$/.test(source))).toEqual([]);
  }
  const ingest = readZip(join(out, 'ingest.zip')).get('dist/lambda/ingest/index.js')!;
  expect(ingest.length).toBeLessThanOrEqual(800 * 1024);
  // RE2 for payload-filter regexes ships beside the bundle, loaded on the first regex filter only.
  for (const fn of ['ingest', 'worker'] as const) {
    const zip = readZip(join(out, `${fn}.zip`));
    expect(zip.get(`dist/lambda/${fn}/index.js`)!.toString()).not.toContain('RE2JS.compile=');
    const extracted = mkdtempSync(join(tmpdir(), 'hookagent-re2-'));
    writeFileSync(join(extracted, 're2.js'), zip.get(`dist/lambda/${fn}/node_modules/re2js/index.js`)!);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { RE2JS } = require(join(extracted, 're2.js')) as typeof import('re2js');
    expect(RE2JS.compile('^(a+)+$').matches('a'.repeat(50_000) + 'b')).toBe(false);
  }
  expect(readZip(join(out, 'ingest.zip')).get('dist/lambda/ingest/index.js.map')!.toString()).not.toContain('client-bedrock-runtime');
});

test('the shared esbuild settings alone build the packaged bundles (the cold-start and worker-bundle benches measure them)', async () => {
  const options = JSON.parse(readFileSync(join(ROOT, 'scripts', 'lambda-esbuild.json'), 'utf8')) as BuildOptions;
  for (const fn of ['ingest', 'worker'] as const) {
    const built = await build({ ...options, absWorkingDir: ROOT, entryPoints: [join(ROOT, 'functions', fn, 'handler.ts')], outfile: `${fn}.js`, write: false });
    const code = built.outputFiles.find((file) => file.path.endsWith(`${fn}.js`))!.text;
    const packaged = readZip(join(out, `${fn}.zip`)).get(`dist/lambda/${fn}/index.js`)!.toString();
    // Identical but for the source map's file name on the last line.
    // Compared by size and digest: a failure prints two short lines, not two 800 KB bundles.
    const body = (text: string) => {
      const code = text.slice(0, text.lastIndexOf('//# sourceMappingURL='));
      return { bytes: Buffer.byteLength(code), sha256: createHash('sha256').update(code).digest('hex') };
    };
    expect(body(code)).toEqual(body(packaged));
  }
});

/** Unpacks a function's zip; returns the directory. */
function extract(zip: string): string {
  const extracted = mkdtempSync(join(tmpdir(), 'hookagent-bundle-'));
  for (const [name, data] of readZip(join(out, zip))) {
    mkdirSync(join(extracted, dirname(name)), { recursive: true });
    writeFileSync(join(extracted, name), data);
  }
  return extracted;
}

/**
 * Runs a packaged handler in a fresh Node process over `inputs`, one after another; returns its
 * answers. `between`: JavaScript the process runs before each input after the first (what
 * happens elsewhere meanwhile, e.g. a `webhook resume` behind the container's cache).
 */
async function invokeBundle(fn: 'ingest' | 'worker', inputs: unknown[], env: NodeJS.ProcessEnv, between = ''): Promise<Array<Record<string, any>>> {
  acting = fn === 'ingest' ? 'IngestRole' : 'WorkerRole';
  const root = extract(`${fn}.zip`);
  const file = join(root, 'inputs.json');
  writeFileSync(file, JSON.stringify(inputs));
  const script = `const { handler } = require(${JSON.stringify(join(root, `dist/lambda/${fn}/index.js`))});
    (async () => { for (const [i, e] of require(${JSON.stringify(file)}).entries()) { if (i > 0) { ${between} } console.log(JSON.stringify(await handler(e))); } })();`;
  const { stdout, stderr } = await run(process.execPath, ['-e', script], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH, HOOKAGENT_STAGE: 'test', AWS_REGION: 'eu-west-1', POWERTOOLS_LOG_LEVEL: 'ERROR', AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
      HOOKAGENT_CONFIG_DIR: join(root, `dist/lambda/${fn}/config`), AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env,
    },
  });
  const lines = stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
  // CloudWatch EMF documents (Powertools Metrics) share stdout with the answers.
  lastEmf = lines.filter((line) => line._aws);
  lastStderr = stderr;
  return lines.filter((line) => !line._aws);
}

/** The role of the function running: the recorder answers what it does not allow with AccessDenied, as IAM would. */
let acting: 'IngestRole' | 'WorkerRole' = 'IngestRole';
let lastEmf: Array<Record<string, any>> = [];
/** What the last bundle run wrote to stderr (its error logs). */
let lastStderr = '';
/** `Name` → the dimension values and value of each EMF data point the last bundle run wrote. */
function emfPoints(): Array<{ name: string; value: unknown; dimensions: Record<string, unknown> }> {
  return lastEmf.flatMap((doc) => (doc._aws.CloudWatchMetrics as Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string }> }>).flatMap((set) =>
    set.Metrics.map((m) => ({ name: m.Name, value: doc[m.Name], dimensions: Object.fromEntries(set.Dimensions.flat().map((d) => [d, doc[d]])) }))));
}

test('the packaged ingest bundle starts on this Node and answers', async () => {
  const [health, unsigned] = await invokeBundle('ingest', [
    apiEvent({ method: 'GET', path: '/health' }),
    apiEvent({ method: 'POST', path: '/webhooks/github', headers: { 'x-github-event': 'push', 'x-hub-signature-256': 'sha256=00' }, body: '{}' }),
  ], { QUEUE_URL: 'http://127.0.0.1:9/queue', PAYLOAD_BUCKET: 'bucket', ...CANARIES });
  expect(health).toMatchObject({ statusCode: 200 });
  expect(JSON.parse(health!.body)).toEqual({ status: 'ok' });
  expect(unsigned!.statusCode).toBe(401);
}, 30_000);

test('a packaged ingest bundle without its prepared configuration answers 503 and logs how to fix it', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'hookagent-no-config-'));
  const [answer] = await invokeBundle('ingest', [apiEvent({ method: 'GET', path: '/health' })], {
    QUEUE_URL: 'http://127.0.0.1:9/queue', PAYLOAD_BUCKET: 'bucket', HOOKAGENT_CONFIG_DIR: empty,
  });
  expect(answer?.statusCode).toBe(503);
  const logged = lastStderr.split('\n').filter((line) => line.includes('"ingest could not start"'));
  expect(logged).toHaveLength(1);
  expect(logged[0]).toContain(`${join(empty, 'config.json')} is missing: package the service again`);
}, 30_000);

test('a packaged worker without its prepared configuration fails the whole batch (the messages stay queued) and says why', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'hookagent-no-config-'));
  const message = { v: 1, event_id: 'evt_no_config', subscription: 'any', source: 'github', event: 'push', delivery_id: 'nc', received_at: new Date().toISOString(), payload: {} };
  const batch = { Records: [toSqsRecord({ messageId: 'nc', receiptHandle: 'rh-nc', body: JSON.stringify(message), receiveCount: 1, sentAt: Date.now() }, 'arn:aws:sqs:eu-west-1:0:q')] };
  const failed = await invokeBundle('worker', [batch], {
    QUEUE_URL: 'http://127.0.0.1:9/queue', PAYLOAD_BUCKET: 'bucket', HOOKAGENT_CONFIG_DIR: empty,
  }).then(() => undefined, (error: { code?: number; stderr?: string }) => error);
  // The handler rejected: Lambda then returns every message of the batch to the queue.
  expect(failed?.code).not.toBe(0);
  expect(failed?.stderr).toContain(`The prepared configuration ${join(empty, 'config.json')} is missing: package the service again`);
}, 30_000);

describe('each role allows every AWS call its packaged bundle makes', () => {
  let dynamo: TestDynamo;
  let recorder: AwsRecorder;
  let github: FakeCodehost;
  /** The model: it answers prompts asking for a transcript, and refuses the rest (401, a final failure). */
  let llm: LocalServer;
  let env: NodeJS.ProcessEnv;
  const GH = 'iam-github-secret';
  const queueUrl = (logicalId: string) => `${recorder.url}/000000000000/${logicalId}`;

  beforeAll(async () => {
    dynamo = await startDynalite('test');
    github = await startFakeCodehost();
    llm = await startLocalServer((req, res) => {
      if (!req.body.includes('transcript-please')) return sendJson(res, 401, { error: { message: 'no key' } });
      sendJson(res, 200, { id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Looks fine.' }, finish_reason: 'stop' }] });
    });
    recorder = await startAwsRecorder({
      // Queue messages go by reference (no payload): the refusal keys on the delivery id, which they carry.
      dynamoEndpoint: dynamo.endpoint, refuseSendsContaining: 'iam-refused',
      parameters: {
        '/hookagent/test/GITHUB_WEBHOOK_SECRET': GH, '/hookagent/test/GITLAB_WEBHOOK_SECRET': 'iam-gitlab',
        '/hookagent/test/OPENAI_API_KEY': 'sk-iam', '/hookagent/test/SLACK_WEBHOOK_URL': 'http://127.0.0.1:9/services/x',
        '/hookagent/test/GITHUB_TOKEN': 'ghp_iam', '/hookagent/test/GITHUB_API_URL': github.url,
        '/hookagent/test/OPENAI_BASE_URL': llm.url,
      },
      authorize: (call) => allows(acting, call),
    });
    env = {
      AWS_ENDPOINT_URL_DYNAMODB: recorder.url, AWS_ENDPOINT_URL_SQS: recorder.url, AWS_ENDPOINT_URL_S3: recorder.url, AWS_ENDPOINT_URL_SSM: recorder.url,
      AWS_ACCESS_KEY_ID: 'AKIDIAMTEST', AWS_SECRET_ACCESS_KEY: 'iam-test', AWS_MAX_ATTEMPTS: '1',
      QUEUE_URL: queueUrl('EventQueue'), DEAD_LETTER_QUEUE_URL: queueUrl('DeadLetterQueue'), PAYLOAD_BUCKET: 'hookagent-test-payloads',
    };
    await new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions).create({
      name: 'iam', events: ['pull_request'], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: 'x',
    });
  });
  afterAll(async () => {
    await recorder.close();
    await dynamo.close();
    await github.close();
    await llm.close();
  });

  /** Whether `role` has an Allow statement for the call's action on the call's resource. */
  function allows(role: string, call: AwsCall): boolean {
    const statements = roleStatements(role)
      .filter((st) => st.Effect === 'Allow' && [st.Action].flat().includes(call.action));
    return statements.some((st) => [st.Resource].flat().some((r: any) => {
      const att = r?.['Fn::GetAtt'] as [string, string] | undefined;
      if (call.action.startsWith('dynamodb:')) return att?.[1] === 'Arn' && resource(att[0]).Properties.TableName === call.resource;
      if (call.action.startsWith('sqs:')) return att?.[1] === 'Arn' && call.resource === queueUrl(att[0]);
      if (call.action.startsWith('s3:')) {
        const [bucketArn, suffix] = r?.['Fn::Join']?.[1] ?? [];
        return bucketArn?.['Fn::GetAtt']?.[0] === 'PayloadBucket' && iamMatches(`${env.PAYLOAD_BUCKET}${String(suffix)}`, call.resource);
      }
      if (call.action.startsWith('ssm:')) {
        const pattern = String(r?.['Fn::Sub'] ?? '').split(':parameter')[1] ?? '';
        return pattern.endsWith('/*') && call.resource.startsWith(pattern.slice(0, -1));
      }
      return false;
    }));
  }

  const refused = (role: string) => recorder.calls.filter((call) => !allows(role, call)).map((c) => `${c.action} ${c.resource}`);
  const made = () => [...new Set(recorder.calls.map((c) => `${c.action} ${c.resource}`))].sort();

  test('ingest: accepted, duplicate, large payload, a dead request resumed, a queue refusal released', async () => {
    recorder.calls.length = 0;
    const dedup = new DynamoDedupStore(dynamo.client, dynamo.tables.dedup, { now: () => Date.now() - 120_000 });
    await dedup.claim('github#iam-resume', { eventId: 'evt_iam_resume', ttlSeconds: 3600, staleBefore: 0 });
    const signed = (delivery: string, title: string) => {
      const body = JSON.stringify({ action: 'opened', number: 1, pull_request: { number: 1, title }, repository: { full_name: 'o/r' } });
      return apiEvent({ path: '/webhooks/github', body, headers: { 'x-github-event': 'pull_request', 'x-github-delivery': delivery, 'x-hub-signature-256': signHub(body, GH) } });
    };
    const answers = await invokeBundle('ingest', [
      signed('iam-1', 'small'), signed('iam-1', 'small'), signed('iam-large', 'x'.repeat(300_000)), signed('iam-resume', 'again'), signed('iam-refused', 'refuse-me'),
    ], env);
    expect(answers.map((a) => [a.statusCode, JSON.parse(a.body).status])).toEqual([[202, 'accepted'], [200, 'duplicate'], [202, 'accepted'], [202, 'accepted'], [503, 'error']]);
    expect(JSON.parse(answers[3]!.body).event_id).toBe('evt_iam_resume');
    expect(made()).toEqual(expect.arrayContaining([
      'dynamodb:Scan hookagent-test-subscriptions', 'dynamodb:PutItem hookagent-test-dedup', 'dynamodb:GetItem hookagent-test-dedup', 'dynamodb:UpdateItem hookagent-test-dedup',
      'dynamodb:BatchWriteItem hookagent-test-events', 'dynamodb:Query hookagent-test-events', `sqs:SendMessage ${queueUrl('EventQueue')}`,
      'dynamodb:PutItem hookagent-test-requests',
      // Accepted: the claim and the records in one transaction, the commit with the request log's entry.
      'dynamodb:PutItem hookagent-test-events', 'dynamodb:BatchWriteItem hookagent-test-dedup', 'dynamodb:BatchWriteItem hookagent-test-requests',
      'ssm:GetParameter /hookagent/test/GITHUB_WEBHOOK_SECRET', expect.stringMatching(/^s3:PutObject hookagent-test-payloads\/payloads\//),
    ]));
    expect(refused('IngestRole')).toEqual([]);
    // One Requests data point per answer, by endpoint family and outcome.
    const requests = emfPoints().filter((p) => p.name === 'Requests').map((p) => `${p.dimensions.endpoint} ${p.dimensions.outcome} ${p.dimensions.service} ${p.dimensions.stage}`);
    expect(requests.sort()).toEqual([
      'github accepted hookagent-ingest test', 'github accepted hookagent-ingest test', 'github accepted hookagent-ingest test',
      'github duplicate hookagent-ingest test', 'github unavailable hookagent-ingest test',
    ]);
  }, 60_000);

  test('ingest: an event held for a paused subscription is checked against a fresh read (a resume may have run)', async () => {
    recorder.calls.length = 0;
    await new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions).create({
      name: 'iam-paused', events: ['issues'], skills: [], deliver: ['log'], state: 'paused', created_at: '', updated_at: '', secret: 'x',
    });
    const body = JSON.stringify({ action: 'opened', issue: { number: 2, title: 'held' }, repository: { full_name: 'o/r' } });
    const [held] = await invokeBundle('ingest', [apiEvent({ path: '/webhooks/github', body, headers: { 'x-github-event': 'issues', 'x-github-delivery': 'iam-held', 'x-hub-signature-256': signHub(body, GH) } })], env);
    expect([held!.statusCode, JSON.parse(held!.body).status]).toEqual([202, 'held']);
    expect(made()).toEqual(expect.arrayContaining(['dynamodb:GetItem hookagent-test-subscriptions']));
    expect(refused('IngestRole')).toEqual([]);
  }, 60_000);

  test('ingest: a release it takes after a resume it raced, whose queue send fails, gives its release claim back (hunt 12 D2)', async () => {
    recorder.calls.length = 0;
    await new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions).create({
      name: 'iam-raced', events: ['issues'], skills: [], deliver: ['log'], state: 'paused', created_at: '', updated_at: '', secret: 'x',
    });
    const issue = (delivery: string, title: string) => {
      const body = JSON.stringify({ action: 'opened', issue: { number: 3, title }, repository: { full_name: 'o/r' } });
      return apiEvent({ path: '/webhooks/github', body, headers: { 'x-github-event': 'issues', 'x-github-delivery': delivery, 'x-hub-signature-256': signHub(body, GH) } });
    };
    // `webhook resume` runs between the two requests, straight on the table: the container's 5 s cache still sees the subscription paused.
    const resume = `const d = require('@aws-sdk/client-dynamodb'); const c = new d.DynamoDBClient({ endpoint: ${JSON.stringify(dynamo.endpoint)}, region: 'eu-west-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
      await c.send(new d.UpdateItemCommand({ TableName: ${JSON.stringify(dynamo.tables.subscriptions)}, Key: { name: { S: 'iam-raced' } }, UpdateExpression: 'SET #s = :a', ExpressionAttributeNames: { '#s': 'state' }, ExpressionAttributeValues: { ':a': { S: 'active' } } })); c.destroy();`;
    // The second request's send is refused (a 500): "nothing of this chunk went out: a resume run again at once may take it" (lifecycle.ts release()).
    const [first, second] = await invokeBundle('ingest', [issue('iam-raced-first', 'primes the cache'), issue('iam-refused-raced', 'raced a resume')], env, resume);
    expect([first!.statusCode, JSON.parse(first!.body).status]).toEqual([202, 'held']);
    const eventId = JSON.parse(second!.body).event_id as string;
    // The release ran (claim taken, records re-read, the send refused) and gave its claim back (DeleteItem on the dedup table).
    expect(made()).toEqual(expect.arrayContaining([
      'dynamodb:PutItem hookagent-test-dedup', 'dynamodb:Query hookagent-test-events', `sqs:SendMessage ${queueUrl('EventQueue')}`, 'dynamodb:DeleteItem hookagent-test-dedup',
    ]));
    expect(refused('IngestRole')).toEqual([]);
    const claim = await dynamo.client.send(new GetItemCommand({ TableName: dynamo.tables.dedup, Key: { key: { S: `lease#${eventId}#iam-raced#release` } }, ConsistentRead: true }));
    expect(claim.Item).toBeUndefined();
  }, 60_000);

  test('worker: a message for an unknown subscription and a malformed one end in the dead-letter queue', async () => {
    recorder.calls.length = 0;
    const message = { v: 1, event_id: 'evt_iam_w', subscription: 'gone', source: 'github', event: 'pull_request', delivery_id: 'w1', received_at: new Date().toISOString(), payload: {} };
    const sqsEvent = (body: string, id: string) => ({ Records: [toSqsRecord({ messageId: id, receiptHandle: id, body, receiveCount: 1, sentAt: Date.now() }, 'arn:aws:sqs:eu-west-1:0:q')] });
    const answers = await invokeBundle('worker', [sqsEvent(JSON.stringify(message), 'w1'), sqsEvent('not json', 'w2')], env);
    expect(answers).toEqual([{ batchItemFailures: [] }, { batchItemFailures: [] }]);
    expect(made()).toEqual(expect.arrayContaining([
      'dynamodb:GetItem hookagent-test-subscriptions', 'dynamodb:GetItem hookagent-test-events', 'dynamodb:BatchWriteItem hookagent-test-events',
      `sqs:SendMessage ${queueUrl('DeadLetterQueue')}`, 'ssm:GetParameter /hookagent/test/OPENAI_API_KEY',
    ]));
    expect(refused('WorkerRole')).toEqual([]);
    // The worker's EMF: both events started (queue-to-start latency); one unknown subscription and one malformed body were dead-lettered, plus the cold start.
    const names = emfPoints().map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(['QueueToStartLatency', 'DeadLetters', 'ColdStart']));
    const deadLetters = emfPoints().filter((p) => p.name === 'DeadLetters');
    expect(deadLetters.map((p) => p.value)).toEqual([1, 1]);
    expect(deadLetters[0]?.dimensions).toEqual({ service: 'hookagent-worker', stage: 'test' });
  }, 60_000);

  test('worker: a message sent by reference is read with its record (Query), allowed', async () => {
    recorder.calls.length = 0;
    const message: QueueMessage = {
      v: 1, event_id: 'evt_iam_ref', subscription: 'iam', source: 'github', event: 'pull_request', action: 'opened', delivery_id: 'w4',
      received_at: new Date().toISOString(), payload: { action: 'opened', pull_request: { number: 4, title: 'read from the record' } },
    };
    const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
    await events.putAll([eventRecord(message, 'queued', message.received_at)]);
    const { payload: _payload, ...pointer } = message;
    const sqsEvent = { Records: [toSqsRecord({ messageId: 'w4', receiptHandle: 'rh-w4', body: JSON.stringify({ ...pointer, recorded: true }), receiveCount: 1, sentAt: Date.now() }, 'arn:aws:sqs:eu-west-1:0:q')] };
    await invokeBundle('worker', [sqsEvent], env);
    expect(made()).toEqual(expect.arrayContaining(['dynamodb:Query hookagent-test-events']));
    expect(refused('WorkerRole')).toEqual([]);
    // The prompt (saved before the agent runs) was rendered from the payload read with the record.
    expect((await events.get('evt_iam_ref', 'iam'))?.prompt).toContain('read from the record');
  }, 60_000);

  test('worker: skills come from the prepared skills.json (the user skill and a built-in one load; an unknown one names the available ones)', async () => {
    const store = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
    const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
    const sent = async (subscription: string, skills: string[], id: string) => {
      await store.create({ name: subscription, events: ['pull_request'], skills, deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: 'x' });
      const message: QueueMessage = {
        v: 1, event_id: id, subscription, source: 'github', event: 'pull_request', action: 'opened', delivery_id: id,
        received_at: new Date().toISOString(), payload: { action: 'opened', pull_request: { number: 5, title: 'skills' } },
      };
      return toSqsRecord({ messageId: id, receiptHandle: `rh-${id}`, body: JSON.stringify(message), receiveCount: 1, sentAt: Date.now() }, 'arn:aws:sqs:eu-west-1:0:q');
    };
    const records = [await sent('iam-skilled', ['release-notes', 'code-review'], 'evt_iam_skilled'), await sent('iam-unskilled', ['no-such-skill'], 'evt_iam_unskilled')];
    await invokeBundle('worker', [{ Records: records }], env);
    // Skills load before the prompt is saved; the agent (unreachable here) fails after that.
    const skilled = await events.get('evt_iam_skilled', 'iam-skilled');
    expect(skilled?.prompt).toContain('skills');
    expect(skilled?.error?.code).not.toMatch(/^skill_/);
    const unskilled = await events.get('evt_iam_unskilled', 'iam-unskilled');
    expect(unskilled?.status).toBe('failed');
    expect(unskilled?.error).toEqual({ code: 'skill_not_found', message: "No skill named 'no-such-skill'; available: alert-triage, code-review, issue-triage, release-notes" });
  }, 60_000);

  test('worker: a comment delivered to GitHub loads octokit from the file beside the bundle (direct delivery, agent none)', async () => {
    recorder.calls.length = 0;
    await new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions).create({
      name: 'iam-github', events: ['pull_request'], skills: [], deliver: ['codehost_comment'], agent: 'none', prompt: 'Seen: {pull_request.title}',
      state: 'active', created_at: '', updated_at: '', secret: 'x',
    });
    const message: QueueMessage = {
      v: 1, event_id: 'evt_iam_github', subscription: 'iam-github', source: 'github', event: 'pull_request', action: 'opened', delivery_id: 'w6',
      received_at: new Date().toISOString(),
      payload: { action: 'opened', number: 7, pull_request: { number: 7, title: 'octokit on demand' }, repository: { full_name: 'o/r', name: 'r', owner: { login: 'o' } } },
    };
    const sqsEvent = { Records: [toSqsRecord({ messageId: 'w6', receiptHandle: 'rh-w6', body: JSON.stringify(message), receiveCount: 1, sentAt: Date.now() }, 'arn:aws:sqs:eu-west-1:0:q')] };
    const answers = await invokeBundle('worker', [sqsEvent], env);
    expect(answers).toEqual([{ batchItemFailures: [] }]);
    expect(github.comments.get('/repos/o/r/issues/7')?.map((c) => c.body)).toEqual([expect.stringContaining('Seen: octokit on demand')]);
    expect((await new DynamoEventLog(dynamo.client, dynamo.tables.events).get('evt_iam_github', 'iam-github'))?.status).toBe('delivered');
    expect(refused('WorkerRole')).toEqual([]);
  }, 60_000);

  test('worker: every S3 key it writes is within its role: the whole of a long reply, a payload moved out of its record, a large transcript', async () => {
    recorder.calls.length = 0;
    const store = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
    await store.create({ name: 'iam-long', events: ['pull_request'], skills: [], deliver: ['log'], agent: 'none', prompt: 'PR {pull_request.body}', state: 'active', created_at: '', updated_at: '', secret: 'x' });
    await store.create({ name: 'iam-transcript', events: ['pull_request'], skills: [], deliver: ['log'], prompt: 'Review {pull_request.body}', state: 'active', created_at: '', updated_at: '', secret: 'x' });
    const sent = (subscription: string, payload: Record<string, unknown>) => {
      const message: QueueMessage = {
        v: 1, event_id: newEventId(Date.now()), subscription, source: 'github', event: 'pull_request', action: 'opened', delivery_id: subscription,
        received_at: new Date().toISOString(), payload: { action: 'opened', ...payload },
      };
      return { message, record: toSqsRecord({ messageId: subscription, receiptHandle: `rh-${subscription}`, body: JSON.stringify(message), receiveCount: 1, sentAt: Date.now() }, 'arn:aws:sqs:eu-west-1:0:q') };
    };
    // A 70,000-character reply (kept whole beside its cut record), with 300 KB of payload the record cannot keep as well.
    const long = sent('iam-long', { pull_request: { number: 8, body: 'b'.repeat(70_000) }, filler: 'f'.repeat(300_000) });
    // A 12 KB prompt: its transcript is too large for the record.
    const reviewed = sent('iam-transcript', { pull_request: { number: 9, body: `transcript-please ${'d'.repeat(12_000)}` } });
    const answers = await invokeBundle('worker', [{ Records: [long.record] }, { Records: [reviewed.record] }], env);
    expect(answers).toEqual([{ batchItemFailures: [] }, { batchItemFailures: [] }]);
    const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
    const longRecord = await events.get(long.message.event_id, 'iam-long');
    expect(longRecord).toMatchObject({ status: 'delivered', reply_ref: expect.stringMatching(/-reply\.json$/), message: { payload_ref: expect.stringMatching(/^s3:/) } });
    expect((await events.get(reviewed.message.event_id, 'iam-transcript'))).toMatchObject({ status: 'delivered', transcript_ref: expect.stringMatching(/^s3:.*transcript_/) });
    const bucket = env.PAYLOAD_BUCKET;
    expect(made().filter((c) => c.startsWith('s3:'))).toEqual([
      `s3:PutObject ${bucket}/payloads/${long.message.event_id}-iam-long-reply.json`,
      `s3:PutObject ${bucket}/payloads/${long.message.event_id}-iam-long.json`,
      `s3:PutObject ${bucket}/payloads/transcript_${reviewed.message.event_id}_iam-transcript_r1.json`,
    ].sort());
    expect(refused('WorkerRole')).toEqual([]);
    // The worker's keys are not ingest's: it cannot overwrite an event's original payload.
    expect(allows('WorkerRole', { action: 's3:PutObject', resource: `${bucket}/payloads/${long.message.event_id}.json` })).toBe(false);
    expect(allows('WorkerRole', { action: 's3:GetObject', resource: `${bucket}/payloads/${long.message.event_id}.json` })).toBe(true);
    expect(allows('IngestRole', { action: 's3:PutObject', resource: `${bucket}/payloads/${long.message.event_id}.json` })).toBe(true);
  }, 60_000);

  // The recorder takes a put's x-amz-tagging as part of its PutObject, and knows no tagging or copy calls:
  // the calls tests/aws/heldworker-payloads.integration.test.ts sees each function make, checked here.
  test('held payloads (held-items.ts): each function may tag what it writes and what it holds; the worker still writes no event\'s original', () => {
    const bucket = env.PAYLOAD_BUCKET;
    const tag = (key: string) => ({ action: 's3:PutObjectTagging', resource: `${bucket}/payloads/${key}` });
    // Ingest: its put's tag, an event held at arrival, one it releases after a resume it raced or withdraws.
    expect(allows('IngestRole', tag('evt_1.json'))).toBe(true);
    // The worker: its own puts' tags, an event it holds or carries on (ingest's payload or one it moved out).
    for (const key of ['evt_1.json', 'evt_1-sub.json', 'evt_1-sub-reply.json', 'transcript_evt_1_sub_r1.json']) expect(allows('WorkerRole', tag(key))).toBe(true);
    expect(allows('WorkerRole', { action: 's3:PutObject', resource: `${bucket}/payloads/evt_1.json` })).toBe(false);
    expect(allows('IngestRole', tag('transcript_evt_1_sub_r1.json'))).toBe(false);
  });

  test('worker: a copy that finds a live lease is paced with ChangeMessageVisibility, both allowed', async () => {
    recorder.calls.length = 0;
    const message = { v: 1, event_id: 'evt_iam_lease', subscription: 'iam', source: 'github', event: 'pull_request', delivery_id: 'w3', received_at: new Date().toISOString(), payload: {} };
    // Another copy holds the lease for the next minute.
    await new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, { now: () => Date.now() }).acquire('evt_iam_lease', 'iam', 'the-other-copy', 60_000);
    const sqsEvent = { Records: [toSqsRecord({ messageId: 'w3', receiptHandle: 'rh-w3', body: JSON.stringify(message), receiveCount: 1, sentAt: Date.now() }, 'arn:aws:sqs:eu-west-1:0:q')] };
    const answers = await invokeBundle('worker', [sqsEvent], env);
    expect(answers).toEqual([{ batchItemFailures: [{ itemIdentifier: 'w3' }] }]);
    expect(made()).toEqual(expect.arrayContaining(['dynamodb:PutItem hookagent-test-dedup', `sqs:ChangeMessageVisibility ${queueUrl('EventQueue')}`]));
    const paced = recorder.visibility.find((v) => v.receiptHandle === 'rh-w3');
    expect(paced?.seconds).toBeGreaterThanOrEqual(24);
    expect(paced?.seconds).toBeLessThanOrEqual(36);
    expect(refused('WorkerRole')).toEqual([]);
  }, 60_000);
});

describe('configuration AWS cannot honour is refused at packaging', () => {
  test.each([
    ['webhooks:\n  max_payload_size: 20MB\n', "webhooks.max_payload_size: must be at most 10MB (API Gateway's request limit)"],
    ['webhooks:\n  max_payload_size: 6MB\n', 'webhooks.max_payload_size: must be at most 4MB on AWS'],
    ['agent: { timeout: 10m }\n', "agent.timeout: agent.timeout plus 3 × delivery.timeout must stay under the worker's 300s Lambda timeout"],
    ['webhooks:\n  github: { secret: inline-literal }\n', 'webhooks.github.secret'],
    ['webhooks: { unknown_key: 1 }\n', 'unknown_key'],
  ])('%s', async (yaml, message) => {
    const failed = await packageService(configDir(yaml), mkdtempSync(join(tmpdir(), 'hookagent-package-'))).then(
      () => undefined, (error: { code: number; stderr: string; stdout: string }) => error,
    );
    expect(failed?.code).not.toBe(0);
    expect(`${failed?.stdout}\n${failed?.stderr}`).toContain(message);
  }, 60_000);
});
