/**
 * Hunt 12 (awsdeploy) D1: with a stage but no region (config.yaml's `aws: { stage: prod }`,
 * or `--stage` alone), `npx osls package`/`deploy` put the stack in us-east-1 (serverless.yml's
 * fallback, osls' own default) while the CLI let the SDK pick the shell's region (AWS_REGION,
 * the profile's): `webhook list` read tables elsewhere and `status` said the stage was not
 * deployed. Now the CLI uses the same default, and packaging and `status` say so.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildCli, runCli } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { oneBuildAtATime } from '../support/exclusive';

const ROOT = join(__dirname, '..', '..');
const OSLS = join(ROOT, 'node_modules', 'osls', 'bin', 'serverless.js');
const run = promisify(execFile);
const SECRET = 'webhooks:\n  github: { secret: ${GITHUB_WEBHOOK_SECRET} }\n';
const NO_REGION = "config.yaml names no aws.region: npx osls deploys to --region if given, else us-east-1; hookagent commands act on their own --region if given, else us-east-1 (never AWS_REGION or the profile's region). Set aws.region in config.yaml so both use it.";

/** Answers every DynamoDB call with an empty page; the tests read the region each request was signed for. */
let dynamo: LocalServer;
let home: string;

beforeAll(async () => {
  buildCli();
  home = mkdtempSync(join(tmpdir(), 'awsdeploy-home-'));
  // The operator's profile names a region of its own, as AWS_REGION does below.
  writeFileSync(join(home, 'aws-config'), '[default]\nregion = ap-southeast-2\n');
  dynamo = await startLocalServer((_req, res) => sendJson(res, 200, { Items: [], Count: 0, ScannedCount: 0 }, { 'content-type': 'application/x-amz-json-1.0' }));
}, 120_000);
afterAll(async () => dynamo.close());

function configDir(yaml: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'awsdeploy-config-'));
  writeFileSync(join(dir, 'config.yaml'), yaml);
  return dir;
}

/** The operator's shell: AWS_REGION and the profile's region set, no --region unless given. */
function shell(dir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('AWS_')) env[key] = value;
  return {
    ...env, HOME: home, HOOKAGENT_CONFIG_DIR: dir, AWS_REGION: 'eu-west-1', AWS_CONFIG_FILE: join(home, 'aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(home, 'no-credentials'), AWS_EC2_METADATA_DISABLED: 'true', SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off', ...extra,
  };
}

/** `osls package` in `dir`'s shell: the region the package is for, and what osls printed. */
async function packaged(dir: string, args: string[] = []): Promise<{ region: string; output: string }> {
  const out = mkdtempSync(join(tmpdir(), 'awsdeploy-package-'));
  const { stdout, stderr } = await oneBuildAtATime(() => run(process.execPath, [OSLS, 'package', '--package', out, ...args], { cwd: ROOT, env: shell(dir), maxBuffer: 16 * 1024 * 1024 }));
  const state = JSON.parse(readFileSync(join(out, 'serverless-state.json'), 'utf8')) as { service: { provider: { region: string } } };
  return { region: state.service.provider.region, output: `${stdout}\n${stderr}` };
}

/** `hookagent webhook list` in `dir`'s shell against the local DynamoDB endpoint: the region its request was signed for. */
async function cliRegion(dir: string, args: string[] = []): Promise<string | undefined> {
  dynamo.requests.length = 0;
  const listed = await runCli([...args, 'webhook', 'list', '--json'], shell(dir, {
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.url, AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_MAX_ATTEMPTS: '1',
  }));
  expect(listed).toMatchObject({ code: 0, stdout: '[]\n' });
  // The SigV4 credential scope: AKID/<date>/<region>/dynamodb/aws4_request.
  return /Credential=[^/]+\/\d{8}\/([^/]+)\/dynamodb\//.exec(String(dynamo.requests.at(-1)?.headers.authorization ?? ''))?.[1];
}

test('aws: { stage } without a region: osls packages for us-east-1 and says so; the CLI acts there too, not in the shell\'s region', async () => {
  const dir = configDir(`aws: { stage: prod }\n${SECRET}`);
  const { region, output } = await packaged(dir);
  expect(region).toBe('us-east-1');
  expect(await cliRegion(dir)).toBe(region);
  expect(output).toContain(`warning: ${NO_REGION}`);
}, 120_000);

test('--stage alone (no aws section): the same default on both sides; --region, given to both, wins on both', async () => {
  const dir = configDir(SECRET);
  const { region, output } = await packaged(dir, ['--stage', 'qa']);
  expect(region).toBe('us-east-1');
  expect(await cliRegion(dir, ['--stage', 'qa'])).toBe(region);
  expect(output).toContain(`warning: ${NO_REGION}`);
  expect(await cliRegion(dir, ['--stage', 'qa', '--region', 'eu-central-1'])).toBe('eu-central-1');
}, 120_000);

test('config.yaml\'s aws.region: the CLI acts there whatever the shell says, and packaging has nothing to warn about', async () => {
  const dir = configDir(`aws: { stage: prod, region: eu-central-1 }\n${SECRET}`);
  const { region, output } = await packaged(dir);
  expect(region).toBe('eu-central-1');
  expect(output).not.toContain('aws.region');
  expect(await cliRegion(dir)).toBe('eu-central-1');
  expect(await cliRegion(dir, ['--region', 'eu-north-1'])).toBe('eu-north-1');
}, 120_000);

test('a ${VAR} reference as aws.region is no region to packaging, nor to the CLI: both use the default', async () => {
  const dir = configDir(`aws: { stage: prod, region: \${AWS_REGION} }\n${SECRET}`);
  const { stdout } = await run(process.execPath, ['-e', "process.stdout.write(String(require('./infra/deploy-config.cjs').region()))"], { cwd: ROOT, env: shell(dir) });
  // serverless.yml then falls back to 'us-east-1'.
  expect(stdout).toBe('null');
  expect(await cliRegion(dir)).toBe('us-east-1');
}, 60_000);

test('status without aws.region: a note names the region it looks in, and the error says it', async () => {
  const cloudformation = await startLocalServer((_req, res) => {
    res.writeHead(400, { 'content-type': 'text/xml' });
    res.end('<ErrorResponse><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id hookagent-prod does not exist</Message></Error><RequestId>r</RequestId></ErrorResponse>');
  });
  try {
    const dir = configDir(`aws: { stage: prod }\n${SECRET}`);
    const result = await runCli(['status', '--json'], shell(dir, {
      AWS_ENDPOINT_URL_CLOUDFORMATION: cloudformation.url, AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_MAX_ATTEMPTS: '1',
    }));
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const lines = result.stderr.split('\n');
    expect(lines[0]).toBe("note: config.yaml names no aws.region: acting on us-east-1, where npx osls deploys without --region (pass --region <region> if the stage is elsewhere, or set aws.region in config.yaml for both)");
    expect(result.stderr).toContain("The stage 'prod' is not deployed in us-east-1 (no stack hookagent-prod): npx osls deploy --stage prod");
    expect(String(cloudformation.requests[0]?.headers.authorization)).toMatch(/\/us-east-1\/cloudformation\//);
    // Given --region, the note has nothing to add.
    const given = await runCli(['status', '--region', 'eu-west-1'], shell(dir, {
      AWS_ENDPOINT_URL_CLOUDFORMATION: cloudformation.url, AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_MAX_ATTEMPTS: '1',
    }));
    expect(given.stderr).not.toContain('note:');
    expect(given.stderr).toContain("The stage 'prod' is not deployed in eu-west-1");
  } finally {
    await cloudformation.close();
  }
}, 60_000);

test('--region without a stage stays a usage error (exit 2)', async () => {
  const result = await runCli(['--region', 'eu-west-1', 'webhook', 'list'], shell(configDir(SECRET)));
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('--region picks the region of an AWS deployment');
}, 60_000);
