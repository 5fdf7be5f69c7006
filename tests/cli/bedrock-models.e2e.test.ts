/**
 * Hunt 3, D4: on an AWS stage with Bedrock the worker's role may invoke only agent.model and
 * agent.models, so `subscribe`/`update --model` refuses another model at once, naming what
 * to change, instead of accepting it and failing every run with AccessDenied. Locally (the
 * user's own credentials) any model is accepted.
 */
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { runCli, tempConfigDir } from '../support/cli';
import { useCliStage } from '../support/cli-stage';

const AGENT = 'agent: { provider: bedrock, model: eu.anthropic.claude-sonnet-4-20250514-v1:0, models: [anthropic.claude-3-haiku-20240307-v1:0] }\n';
const stage = useCliStage();

const env = stage.env;

test('on a stage: a model outside agent.model and agent.models is refused with what to do; a listed one is accepted', async () => {
  const dir = tempConfigDir(`aws: { region: eu-west-1, stage: prod }\n${AGENT}`);
  const refused = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'opus', '--events', 'issues', '--model', 'anthropic.claude-3-opus-20240229-v1:0'], env());
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain("--model anthropic.claude-3-opus-20240229-v1:0: the worker of stage 'prod' may invoke only eu.anthropic.claude-sonnet-4-20250514-v1:0, anthropic.claude-3-haiku-20240307-v1:0 on Bedrock");
  expect(refused.stderr).toContain('add it to agent.models in config.yaml and deploy again');
  const store = new DynamoSubscriptionStore(stage.dynamo.client, 'hookagent-prod-subscriptions');
  expect(await store.get('opus')).toBeUndefined();

  const accepted = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'haiku', '--events', 'issues', '--model', 'anthropic.claude-3-haiku-20240307-v1:0'], env());
  expect(accepted.code).toBe(0);
  expect(accepted.stderr).not.toContain('--model');
  expect(await store.get('haiku')).toMatchObject({ model: 'anthropic.claude-3-haiku-20240307-v1:0' });
  const updated = await runCli(['--config-dir', dir, 'webhook', 'update', 'haiku', '--model', 'anthropic.claude-3-opus-20240229-v1:0'], env());
  expect(updated.code).toBe(1);
  expect(await store.get('haiku')).toMatchObject({ model: 'anthropic.claude-3-haiku-20240307-v1:0' });
}, 60_000);

test('locally (no stage), any model is accepted: the user\'s own credentials decide', async () => {
  const dir = tempConfigDir(AGENT);
  const result = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'opus', '--events', 'issues', '--model', 'anthropic.claude-3-opus-20240229-v1:0']);
  expect(result).toMatchObject({ code: 0, stderr: '' });
}, 60_000);
