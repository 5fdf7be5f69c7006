/**
 * Hunt 12 D1, through the built CLI: a `${…}` in a YAML comment is not configuration, and
 * a bad reference in a value names its key path, reported with every other error of the
 * file in one run (DESIGN §2.3; README "all of them in one run").
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCli, hkIn, tempConfigDir } from '../support/cli';

beforeAll(() => buildCli(), 120_000);

test('a ${…} inside a YAML comment is not configuration', async () => {
  const dir = tempConfigDir([
    'webhooks:',
    '  # GitLab: the project token goes in ${GITLAB-TOKEN} (Settings > Access tokens)',
    '  max_payload_size: 1MB',
    '',
  ].join('\n'));
  const result = await hkIn(dir, 'webhook', 'list');
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
}, 60_000);

test("a bad reference is reported with its key path, beside the file's other errors", async () => {
  const dir = tempConfigDir([
    'webhooks:',
    '  max_payload_size: 0',
    '  public_url: "https://hooks.example.com/${}"',
    'agent:',
    '  provider: nope',
    '',
  ].join('\n'));
  const result = await hkIn(dir, 'webhook', 'list');
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(/webhooks\.public_url: \$\{\} is not a valid reference/);
  expect(result.stderr).toContain('webhooks.max_payload_size:');
  expect(result.stderr).toContain('agent.provider:');
  expect(result.stderr).not.toMatch(/line \d/);
}, 60_000);

test('a bad reference in a flow mapping names its key; values from .env are never shown', async () => {
  const dir = tempConfigDir([
    'webhooks:',
    '  github: { secret: ${GITHUB_WEBHOOK_SECRET} }',
    '  gitlab: { secret: ${GITLAB-WEBHOOK-SECRET} }',
    '',
  ].join('\n'));
  writeFileSync(join(dir, '.env'), 'GITHUB_WEBHOOK_SECRET=whsec-from-dotenv-0123\nGITLAB_WEBHOOK_SECRET=glsec-from-dotenv-4567\n', { mode: 0o600 });
  const result = await hkIn(dir, 'webhook', 'list');
  expect(result.code).toBe(1);
  expect(result.stderr).toContain('webhooks.gitlab.secret: ${GITLAB-WEBHOOK-SECRET} is not a valid reference');
  expect(result.stderr).not.toContain('inline secrets');
  expect(result.stderr).not.toMatch(/from-dotenv/);
}, 60_000);
