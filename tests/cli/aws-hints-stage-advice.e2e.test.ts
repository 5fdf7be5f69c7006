/**
 * Hunt 10 (cliaws) D5 and D6: advice given on an AWS stage is the stage's.
 * - D5: `subscribe` on a stage without webhooks.github.secret said to put the secret in
 *   `.env`, which no deployed function reads (a stage resolves ${VAR} from its function
 *   environment, else SSM /hookagent/<stage>/<VAR>, and a config.yaml change needs a deploy).
 * - D6: with no AWS credentials anywhere, `secrets list` printed the SDK's error alone (its
 *   word "list" was taken for advice); every command now says how to provide credentials.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hintFor } from '../../cli/hints';
import { runCli, tempConfigDir } from '../support/cli';
import { useCliStage } from '../support/cli-stage';

const stage = useCliStage();

const env = stage.env;
const warningOf = (stdout: string) => stdout.split('\n').find((l) => l.includes('no webhooks.github.secret')) ?? '';
const CREDENTIALS_HINT = 'No AWS credentials found: set AWS_PROFILE (aws sso login / aws configure), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, and run the command again.';

test('subscribe on a stage without webhooks.github.secret: config.yaml, secrets set --stage, then a deploy; not .env', async () => {
  const dir = tempConfigDir('aws: { region: eu-west-1, stage: prod }\nwebhooks: { public_url: "https://abc.execute-api.eu-west-1.amazonaws.com" }\n');
  const created = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'prs', '--events', 'pull_request'], env());
  expect(created.code).toBe(0);
  expect(warningOf(created.stdout)).toMatch(/^ {4}warning: no webhooks\.github\.secret is configured, so stage 'prod' refuses everything at this endpoint \(401\)\. Add webhooks\.github\.secret: \$\{GITHUB_WEBHOOK_SECRET\} to config\.yaml, store a random string with '(npx )?hookagent( --config-dir \S+)? secrets set GITHUB_WEBHOOK_SECRET --stage prod', then npx osls deploy --stage prod; paste the same string into GitHub's "Secret" field$/);
  expect(created.stdout).not.toMatch(/\.env/);
  // `show` gives the same advice as `subscribe`.
  const shown = await runCli(['--config-dir', dir, 'webhook', 'show', 'prs'], env());
  expect(shown.code).toBe(0);
  expect(warningOf(shown.stdout)).toContain("secrets set GITHUB_WEBHOOK_SECRET --stage prod', then npx osls deploy --stage prod");
  expect(shown.stdout).not.toMatch(/\.env/);
}, 60_000);

test('locally the advice stays serve\'s: config.yaml and .env', async () => {
  const created = await runCli(['--config-dir', tempConfigDir(''), 'webhook', 'subscribe', 'prs', '--events', 'pull_request']);
  expect(created.code).toBe(0);
  expect(warningOf(created.stdout)).toContain('Uncomment it in config.yaml, put GITHUB_WEBHOOK_SECRET=<a random string> in .env');
}, 60_000);

test('no AWS credentials: secrets list and webhook list say how to provide them', async () => {
  const home = mkdtempSync(join(tmpdir(), 'hookagent-home-'));
  for (const name of ['AWS_PROFILE', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_WEB_IDENTITY_TOKEN_FILE', 'AWS_CONTAINER_CREDENTIALS_FULL_URI', 'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI']) delete process.env[name];
  const bare = { HOME: home, AWS_CONFIG_FILE: join(home, 'none'), AWS_SHARED_CREDENTIALS_FILE: join(home, 'none'), AWS_EC2_METADATA_DISABLED: 'true', AWS_MAX_ATTEMPTS: '1', AWS_REGION: 'eu-west-1' };
  const dir = tempConfigDir('aws: { region: eu-west-1, stage: prod }\n');
  for (const args of [['secrets', 'list'], ['webhook', 'list']]) {
    const result = await runCli(['--config-dir', dir, ...args], bare);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: .*Could not load credentials from any providers.*\n/);
    expect(result.stderr.trim().split('\n').pop()).toBe(CREDENTIALS_HINT);
  }
}, 60_000);

test('the credentials hint comes before a message\'s own words that look like advice', () => {
  expect(hintFor('unavailable', 'Could not list /hookagent/prod/* in SSM Parameter Store (CredentialsProviderError: Could not load credentials from any providers)')).toBe(CREDENTIALS_HINT);
});
