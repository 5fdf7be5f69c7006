/**
 * What a command loads: a local command starts without the AWS SDK (README, "What the CLI
 * loads at start"); a command on a deployment still gets it, from node_modules, and works.
 * The modules a process loaded are read from its require cache when it exits, through a
 * --require hook.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { buildCli, runCli, tempConfigDir } from '../support/cli';

let dynamo: TestDynamo;
let hook: string;
beforeAll(async () => {
  buildCli();
  dynamo = await startDynalite('prod');
  hook = join(tempConfigDir('', 'hookagent-loads-'), 'hook.cjs');
  writeFileSync(hook, `process.on('exit', () => require('node:fs').writeFileSync(process.env.LOADED_OUT, JSON.stringify(Object.keys(require.cache))));\n`);
}, 60_000);
afterAll(async () => dynamo.close());

async function loaded(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stderr: string; packages: string[] }> {
  const out = join(tempConfigDir('', 'hookagent-loaded-'), 'loaded.json');
  const result = await runCli(args, { NODE_OPTIONS: `--require ${hook}`, LOADED_OUT: out, ...env });
  const files = JSON.parse(readFileSync(out, 'utf8')) as string[];
  const packages = [...new Set(files.flatMap((f) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f)?.[1] ?? []))].sort();
  return { code: result.code, stderr: result.stderr, packages };
}

const aws = (packages: string[]) => packages.filter((p) => /^@aws-sdk\/|^@smithy\/|^@aws-lambda-powertools\//.test(p));

test('local commands start without the AWS SDK, Smithy or Powertools', async () => {
  const dir = tempConfigDir();
  const created = await loaded(['--config-dir', dir, 'webhook', 'subscribe', 'alerts', '--prompt', 'Alert {alerts.0.labels.alertname}']);
  expect(created.code).toBe(0);
  expect(aws(created.packages)).toEqual([]);
  const listed = await loaded(['--config-dir', dir, 'webhook', 'list']);
  expect(listed.code).toBe(0);
  expect(aws(listed.packages)).toEqual([]);
  // The native SQLite binding is what a local command does load from node_modules.
  expect(listed.packages).toContain('better-sqlite3');
  const version = await loaded(['--version']);
  expect(version.code).toBe(0);
  expect(aws(version.packages)).toEqual([]);
  // Nor are they inside the bundle, where the require cache would not show them.
  expect(readFileSync(join(__dirname, '..', '..', 'dist', 'cli.cjs'), 'utf8')).not.toMatch(/node_modules\/(@aws-sdk|@smithy|@aws-lambda-powertools)\//);
});

test('a command on a deployment loads the SDK when it needs it, and acts on the tables', async () => {
  const dir = tempConfigDir('aws: { stage: prod, region: eu-west-1 }\n');
  const env = { AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint, AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret' };
  const listed = await loaded(['--config-dir', dir, 'webhook', 'list'], env);
  expect(listed.stderr).toBe('');
  expect(listed.code).toBe(0);
  expect(listed.packages).toEqual(expect.arrayContaining(['@aws-sdk/client-dynamodb']));
  // Only what this command uses: not Bedrock, CloudFormation or CloudWatch.
  expect(listed.packages).not.toContain('@aws-sdk/client-bedrock-runtime');
  expect(listed.packages).not.toContain('@aws-sdk/client-cloudformation');
});
