/** `webhook subscribe|update --comment-mode sticky|new`, through the built CLI. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli, runCli } from '../support/cli';

beforeAll(() => buildCli(), 60_000);

test('--comment-mode is stored, changed by update, and a bad value is refused with nothing written', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-cm-'));
  writeFileSync(join(dir, 'config.yaml'), 'webhooks: { public_url: "https://hooks.example.com" }\ndelivery: { codehost: { github: { token: ${GH} } } }\n');
  const hk = (...args: string[]) => runCli(['--config-dir', dir, ...args], { GH: 'ghp_x' });
  const bad = await hk('webhook', 'subscribe', 'rev', '--events', 'pull_request', '--deliver', 'codehost_comment', '--comment-mode', 'sometimes');
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain("--comment-mode must be sticky or new, not 'sometimes'");
  expect((await hk('webhook', 'list', '--json')).stdout.trim()).toBe('[]');
  expect((await hk('webhook', 'subscribe', 'rev', '--events', 'pull_request', '--deliver', 'codehost_comment', '--comment-mode', 'new')).code).toBe(0);
  expect(JSON.parse((await hk('webhook', 'show', 'rev', '--json')).stdout)).toMatchObject({ comment_mode: 'new' });
  expect((await hk('webhook', 'update', 'rev', '--comment-mode', 'sticky')).code).toBe(0);
  expect(JSON.parse((await hk('webhook', 'show', 'rev', '--json')).stdout)).toMatchObject({ comment_mode: 'sticky' });
}, 60_000);
