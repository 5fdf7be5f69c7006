/**
 * Hunt 3, D14: a CLI command on a stage that is not deployed (no tables), or with no AWS
 * region anywhere, says what is wrong and what to do, as `status` does, instead of the
 * generic "the store did not answer" hint.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, tempConfigDir } from '../support/cli';
import { useCliStage } from '../support/cli-stage';

const stage = useCliStage();

test('a stage without tables in this region: is it deployed here, and how to check', async () => {
  const result = await runCli(['--config-dir', tempConfigDir(), '--stage', 'staging', '--region', 'eu-west-1', 'webhook', 'list'], {
    AWS_ENDPOINT_URL_DYNAMODB: stage.dynamo.endpoint, AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_MAX_ATTEMPTS: '1',
  });
  expect(result.code).toBe(1);
  expect(result.stderr).toContain('ResourceNotFoundException');
  expect(result.stderr).toMatch(/is the stage deployed in this region \(--stage, --region, or the aws section of config\.yaml\)\? '(npx )?hookagent --config-dir \S+ status' checks it/);
  expect(result.stderr).not.toContain('The store did not answer');
}, 60_000);

test('subscribe on a stage without webhooks.public_url: the printed URLs are serve\'s, and a note says where the stage\'s is', async () => {
  const env = { AWS_ENDPOINT_URL_DYNAMODB: stage.dynamo.endpoint, AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'eu-west-1', AWS_MAX_ATTEMPTS: '1' };
  const bare = await runCli(['--config-dir', tempConfigDir('aws: { region: eu-west-1, stage: prod }\n'), 'webhook', 'subscribe', 'urls', '--events', 'issues'], env);
  expect(bare.code).toBe(0);
  expect(bare.stderr).toMatch(/note: these URLs are serve's on this machine, not stage 'prod': set webhooks.public_url in config.yaml to the stage's API URL \(the stack output HttpApiUrl; '(npx )?hookagent --config-dir \S+ status --stage prod' prints it\)/);
  const set = await runCli(['--config-dir', tempConfigDir('aws: { region: eu-west-1, stage: prod }\nwebhooks: { public_url: "https://abc.execute-api.eu-west-1.amazonaws.com" }\n'), 'webhook', 'show', 'urls'], env);
  expect(set.code).toBe(0);
  expect(set.stdout).toContain('https://abc.execute-api.eu-west-1.amazonaws.com/webhooks/github');
  expect(set.stderr).not.toContain('note:');
  // Locally the default is right: no note.
  const local = await runCli(['--config-dir', tempConfigDir(), 'webhook', 'subscribe', 'urls', '--events', 'issues']);
  expect(local.code).toBe(0);
  expect(local.stderr).not.toContain('note:');
}, 60_000);
