/**
 * `--channel` with `delivery.teamchat` an incoming webhook (the built CLI, the local store):
 * the webhook posts only to its own channel, so subscribe/update say the channel is not
 * used and what would use it (a warning: exit 0); `--channel ''` removes it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCli, hkIn, tempConfigDir } from '../support/cli';

beforeAll(() => buildCli(), 60_000);

const WEBHOOK = 'delivery:\n  teamchat: { provider: slack, webhook_url: ${SLACK_WEBHOOK_URL} }\n';
const BOT = 'delivery:\n  teamchat: { provider: slack, bot_token: ${SLACK_BOT_TOKEN}, channel: "#general" }\n';

/** A config dir with `yaml` and the secrets it references in its .env. */
function configDir(yaml: string): string {
  const dir = tempConfigDir(yaml, 'hookagent-channel-');
  writeFileSync(join(dir, '.env'), 'SLACK_WEBHOOK_URL=https://hooks.slack.example/services/T/B/X\nSLACK_BOT_TOKEN=xoxb-1\n');
  return dir;
}

test('subscribe/update --channel warn when the incoming webhook cannot honour it; exit 0', async () => {
  const dir = configDir(WEBHOOK);
  const created = await hkIn(dir, 'webhook', 'subscribe', 'ch', '--deliver', 'teamchat', '--channel', '#security-alerts', '--agent', 'none', '--prompt', '{text}');
  expect(created.code).toBe(0);
  expect(created.stderr).toContain('warning: channel #security-alerts is not used: delivery.teamchat is an incoming webhook (webhook_url), which posts only to its own channel');
  expect(created.stderr).toContain('delivery.teamchat.bot_token');

  const updated = await hkIn(dir, 'webhook', 'update', 'ch', '--channel', '#ops');
  expect(updated.code).toBe(0);
  expect(updated.stderr).toContain('warning: channel #ops is not used');

  // Said by the command that sets the channel or the targets, not by every later update.
  expect(await hkIn(dir, 'webhook', 'update', 'ch', '--description', 'alerts')).toMatchObject({ code: 0, stderr: '' });
  expect((await hkIn(dir, 'webhook', 'update', 'ch', '--deliver', 'teamchat,log')).stderr).toContain('warning: channel #ops is not used');

  // An empty value clears it, as for the other fields; then nothing to warn about.
  const cleared = await hkIn(dir, 'webhook', 'update', 'ch', '--channel', '');
  expect([cleared.code, cleared.stderr]).toEqual([0, '']);
  expect((await hkIn(dir, 'webhook', 'show', 'ch')).stdout).not.toMatch(/^channel:/im);
  // So does an empty --chat-id (it was kept).
  expect((await hkIn(dir, 'webhook', 'update', 'ch', '--chat-id', '-100123')).code).toBe(0);
  expect((await hkIn(dir, 'webhook', 'show', 'ch')).stdout).toMatch(/chat_id:\s+-100123/);
  expect((await hkIn(dir, 'webhook', 'update', 'ch', '--chat-id', '')).code).toBe(0);
  expect((await hkIn(dir, 'webhook', 'show', 'ch')).stdout).not.toMatch(/chat_id/);
});

test('no warning where the channel is used (bot token) or the subscription does not deliver to teamchat', async () => {
  const bot = await hkIn(configDir(BOT), 'webhook', 'subscribe', 'ch', '--deliver', 'teamchat', '--channel', '#security-alerts');
  expect([bot.code, bot.stderr]).toEqual([0, '']);
  const log = await hkIn(configDir(WEBHOOK), 'webhook', 'subscribe', 'ch', '--deliver', 'log', '--channel', '#x');
  expect([log.code, log.stderr]).toEqual([0, '']);
});
