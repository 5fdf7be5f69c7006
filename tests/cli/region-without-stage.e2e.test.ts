/**
 * Hunt 10 (cliaws) D4: `--region` with no stage (no --stage, no aws section) was dropped
 * without a word, and the command acted on the local store: `subscribe --region eu-west-1`
 * created the subscription in a new {config_dir}/data/hookagent.db that no stage sees.
 * It is a usage error now (exit 2) saying what to pass.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempConfigDir } from '../support/cli';
import { useCliStage } from '../support/cli-stage';

const stage = useCliStage();

const env = stage.env;
const ADVICE = "--region picks the region of an AWS deployment: pass --stage <stage> too (npx osls deploy's default is dev), or add aws: { stage, region } to config.yaml";

test.each([
  [['--region', 'eu-west-1', 'webhook', 'subscribe', 'remote', '--events', 'push']],
  [['webhook', 'list', '--region', 'eu-west-1']],
  [['status', '--region', 'eu-west-1']],
  [['secrets', 'list', '--region', 'eu-west-1']],
])('%j without a stage is a usage error, and the local store is left alone', async (args) => {
  const dir = tempConfigDir('');
  const result = await runCli(['--config-dir', dir, ...args], env());
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr).toBe(`error: ${ADVICE}\nRun with --help for usage and an example.\n`);
  expect(existsSync(join(dir, 'data'))).toBe(false);
}, 60_000);

test('--region with the stage from config.yaml, or with --stage, acts on that deployment', async () => {
  const withSection = await runCli(['--config-dir', tempConfigDir('aws: { stage: prod }\n'), '--region', 'eu-west-1', 'webhook', 'list', '--json'], env());
  expect(withSection).toMatchObject({ code: 0, stdout: '[]\n' });
  const dir = tempConfigDir('');
  const withStage = await runCli(['--config-dir', dir, '--stage', 'prod', '--region', 'eu-west-1', 'webhook', 'list', '--json'], env());
  expect(withStage).toMatchObject({ code: 0, stdout: '[]\n' });
  expect(existsSync(join(dir, 'data'))).toBe(false);
}, 60_000);

test.each([[['--region', 'eu-west-1']], [['--stage', 'prod']]])('serve %j is a usage error: serve is the local service, and the option would be ignored', async (option) => {
  const dir = tempConfigDir('');
  const result = await runCli(['--config-dir', dir, 'serve', ...option, '--port', '0']);
  expect(result.code).toBe(2);
  expect(result.stderr).toBe('error: serve runs the whole service on this machine, from the local store; --stage and --region pick an AWS deployment for the other commands\nRun with --help for usage and an example.\n');
  expect(existsSync(join(dir, 'data'))).toBe(false);
}, 60_000);
