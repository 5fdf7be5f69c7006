/**
 * `hookagent secrets set|list` against a local server speaking SSM's JSON protocol
 * (X-Amz-Target AmazonSSM.*), reached through the SDK's standard endpoint variable.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { readSecretValue } from '../../cli/secrets';
import { sendJson, startLocalServer, type LocalServer, type Recorded } from '../support/local-http';
import { buildCli, runCli } from '../support/cli';

interface Parameter { Name: string; Value: string; Type: string; Version: number }

let ssm: LocalServer;
const parameters = new Map<string, Parameter>();
let denyWrites = false;

/** PutParameter and GetParametersByPath as SSM answers them, two names per page. */
function ssmResponder(request: Recorded, res: Parameters<LocalServer['respond']>[1]): void {
  const target = String(request.headers['x-amz-target']);
  const input = JSON.parse(request.body) as Record<string, unknown>;
  if (target === 'AmazonSSM.PutParameter') {
    if (denyWrites) return sendJson(res, 400, { __type: 'AccessDeniedException', message: 'User is not authorized to perform: ssm:PutParameter' });
    const name = String(input.Name);
    const existing = parameters.get(name);
    if (existing && input.Overwrite !== true) return sendJson(res, 400, { __type: 'ParameterAlreadyExists', message: 'exists' });
    const version = (existing?.Version ?? 0) + 1;
    parameters.set(name, { Name: name, Value: String(input.Value), Type: String(input.Type), Version: version });
    return sendJson(res, 200, { Version: version, Tier: 'Standard' });
  }
  if (target === 'AmazonSSM.GetParametersByPath') {
    const matching = [...parameters.values()].filter((p) => p.Name.startsWith(String(input.Path))).sort((a, b) => a.Name.localeCompare(b.Name));
    const start = Number(input.NextToken ?? 0);
    const page = matching.slice(start, start + 2).map((p) => ({ Name: p.Name, Type: p.Type, Version: p.Version, ...(input.WithDecryption ? { Value: p.Value } : {}) }));
    return sendJson(res, 200, { Parameters: page, ...(start + 2 < matching.length ? { NextToken: String(start + 2) } : {}) });
  }
  sendJson(res, 400, { __type: 'InvalidAction', message: target });
}

beforeAll(async () => {
  buildCli();
  ssm = await startLocalServer(ssmResponder);
}, 60_000);
afterAll(async () => ssm.close());
beforeEach(() => {
  parameters.clear();
  ssm.requests.length = 0;
  denyWrites = false;
});

const env = () => ({ AWS_ENDPOINT_URL_SSM: ssm.url, AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'eu-west-1' });
const configDir = (yaml = '') => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-secrets-'));
  writeFileSync(join(dir, 'config.yaml'), yaml);
  return dir;
};
const SECRET = 'gh-webhook-s3cr3t-value';

test('set stores a SecureString under /hookagent/<stage>/<VAR> from stdin, overwriting, and never prints the value', async () => {
  const dir = configDir();
  const first = await runCli(['--config-dir', dir, 'secrets', 'set', 'GITHUB_WEBHOOK_SECRET', '--stage', 'prod'], env(), `${SECRET}\n`);
  expect(first).toMatchObject({ code: 0, stderr: '' });
  expect(first.stdout).toContain('Stored /hookagent/prod/GITHUB_WEBHOOK_SECRET (SecureString, version 1)');
  expect(parameters.get('/hookagent/prod/GITHUB_WEBHOOK_SECRET')).toEqual({ Name: '/hookagent/prod/GITHUB_WEBHOOK_SECRET', Value: SECRET, Type: 'SecureString', Version: 1 });
  const again = await runCli(['--config-dir', dir, 'secrets', 'set', 'GITHUB_WEBHOOK_SECRET', '--stage', 'prod'], env(), 'rotated');
  expect(again.stdout).toContain('version 2');
  expect(parameters.get('/hookagent/prod/GITHUB_WEBHOOK_SECRET')?.Value).toBe('rotated');
  for (const output of [first.stdout, first.stderr, again.stdout, again.stderr]) {
    expect(output).not.toContain(SECRET);
    expect(output).not.toContain('rotated');
  }
});

test('the stage comes from the aws section when --stage is absent', async () => {
  const dir = configDir('aws: { region: eu-west-1, stage: staging }\n');
  const result = await runCli(['--config-dir', dir, 'secrets', 'set', 'SLACK_WEBHOOK_URL'], env(), 'https://hooks.slack.example/T/B/x');
  expect(result.code).toBe(0);
  expect([...parameters.keys()]).toEqual(['/hookagent/staging/SLACK_WEBHOOK_URL']);
});

test('list shows names only, across pages, and warns about references config.yaml makes that are not set', async () => {
  const dir = configDir('webhooks:\n  github: { secret: ${GITHUB_WEBHOOK_SECRET} }\n  gitlab: { secret: ${GITLAB_WEBHOOK_SECRET} }\naws: { region: eu-west-1, stage: prod }\n');
  for (const [name, value] of [['GITHUB_WEBHOOK_SECRET', SECRET], ['GITHUB_TOKEN', 'ghp_token_value'], ['OPENAI_API_KEY', 'sk-value']]) {
    parameters.set(`/hookagent/prod/${name}`, { Name: `/hookagent/prod/${name}`, Value: value as string, Type: 'SecureString', Version: 1 });
  }
  parameters.set('/hookagent/other/GITLAB_WEBHOOK_SECRET', { Name: '/hookagent/other/GITLAB_WEBHOOK_SECRET', Value: 'x', Type: 'SecureString', Version: 1 });
  const result = await runCli(['--config-dir', dir, 'secrets', 'list'], env());
  expect(result.code).toBe(0);
  expect(result.stdout.trim().split('\n')).toEqual(['GITHUB_TOKEN', 'GITHUB_WEBHOOK_SECRET', 'OPENAI_API_KEY']);
  expect(result.stderr).toContain("config.yaml references GITLAB_WEBHOOK_SECRET, not set for stage 'prod'");
  const pages = ssm.requests.map((r) => JSON.parse(r.body) as Record<string, unknown>);
  expect(pages).toHaveLength(2);
  expect(pages.every((p) => p.WithDecryption === false && p.Path === '/hookagent/prod/')).toBe(true);
  for (const value of [SECRET, 'ghp_token_value', 'sk-value']) expect(result.stdout + result.stderr).not.toContain(value);
  const json = await runCli(['--config-dir', dir, 'secrets', 'list', '--json'], env());
  expect(JSON.parse(json.stdout)).toEqual(['GITHUB_TOKEN', 'GITHUB_WEBHOOK_SECRET', 'OPENAI_API_KEY']);
});

test('run from a checkout, the hint for a reference not set says npx hookagent', async () => {
  const dir = configDir('webhooks:\n  github: { secret: ${GITHUB_WEBHOOK_SECRET} }\naws: { region: eu-west-1, stage: prod }\n');
  const result = await runCli(['--config-dir', dir, 'secrets', 'list'], { ...env(), PATH: '/usr/bin:/bin', npm_lifecycle_event: '' });
  expect(result.code).toBe(0);
  expect(result.stderr).toContain(`not set for stage 'prod': npx hookagent --config-dir ${dir} secrets set <VAR> --stage prod`);
  expect(result.stderr).not.toMatch(/[^x] hookagent secrets set/);
});

test('bad input is refused with a clear message and nothing stored', async () => {
  const dir = configDir();
  const cases: Array<[string[], string | undefined, string]> = [
    [['secrets', 'set', 'GITHUB_TOKEN'], 'value', 'pass --stage'],
    [['secrets', 'set', '../etc/passwd', '--stage', 'prod'], 'value', 'is not a variable name'],
    [['secrets', 'set', 'BAD-NAME', '--stage', 'prod'], 'value', 'is not a variable name'],
    [['secrets', 'set', 'GITHUB_TOKEN', '--stage', 'prod'], '', 'No value given for GITHUB_TOKEN'],
    [['secrets', 'set', 'GITHUB_TOKEN', '--stage', 'prod'], 'x'.repeat(5000), "longer than SSM's 4096 bytes"],
    [['secrets', 'list'], undefined, 'pass --stage'],
  ];
  for (const [args, input, message] of cases) {
    const result = await runCli(['--config-dir', dir, ...args], env(), input);
    expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 1, stdout: '' });
    expect(result.stderr).toContain(message);
  }
  expect(parameters.size).toBe(0);
  // Without a deployment, the refusal says where serve reads secrets locally.
  const local = await runCli(['--config-dir', dir, 'secrets', 'set', 'GITHUB_TOKEN'], env(), 'value');
  expect(local.stderr).toContain(`Locally, put NAME=value lines in ${join(dir, '.env')} (or set environment variables): \``);
  expect(local.stderr).toMatch(/`(npx )?hookagent --config-dir \S+ serve` reads them and picks up a change without a restart\./);
  const usage = await runCli(['--config-dir', dir, 'secrets', 'get', 'X', '--stage', 'prod'], env());
  expect(usage.code).toBe(2);
});

test('an SSM refusal is reported with its reason, without the value', async () => {
  denyWrites = true;
  const result = await runCli(['--config-dir', configDir(), 'secrets', 'set', 'GITHUB_TOKEN', '--stage', 'prod'], env(), 'ghp_secret_token');
  expect(result.code).toBe(1);
  expect(result.stderr).toContain('Could not store /hookagent/prod/GITHUB_TOKEN in SSM Parameter Store (AccessDeniedException');
  expect(result.stderr).not.toContain('ghp_secret_token');
});

describe('the hidden prompt on a terminal', () => {
  const terminal = () => {
    const input = Object.assign(new PassThrough(), { isTTY: true, raw: false, setRawMode(mode: boolean) { input.raw = mode; return input; } });
    const output = new PassThrough();
    let shown = '';
    output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
    return { input, output, shown: () => shown };
  };

  test('typed characters are not echoed, backspace edits, Enter ends, raw mode is restored', async () => {
    const { input, output, shown } = terminal();
    const value = readSecretValue('Value for X (input hidden): ', input, output);
    expect(input.raw).toBe(true);
    input.write('s3cr3tt\u007f');
    input.write('!\r');
    await expect(value).resolves.toBe('s3cr3t!');
    expect(input.raw).toBe(false);
    expect(shown()).toBe('Value for X (input hidden): \n');
  });

  test('Ctrl-C cancels without a value', async () => {
    const { input, output } = terminal();
    const value = readSecretValue('Value: ', input, output);
    input.write('par\u0003');
    await expect(value).rejects.toMatchObject({ code: 'cancelled' });
    expect(input.raw).toBe(false);
  });
});
