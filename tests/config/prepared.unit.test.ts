/** The prepared configuration a deployed function reads (functions/core/config/prepared.ts), and what it refuses. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig, resolveConfig } from '../../functions/core/config/load';
import { PREPARED_CONFIG_FILE, PREPARED_CONFIG_FORMAT, preparedConfigText, readPreparedConfig } from '../../functions/core/config/prepared';
import type { Config } from '../../functions/core/config/types';
import { HookError } from '../../functions/core/errors';

const YAML = `
webhooks:
  github: { secret: [\${GH_OLD}, \${GH_NEW}] }
  allowed_ips: [140.82.112.0/20, 10.0.0.1]
  max_payload_size: 2MB
agent:
  provider: anthropic
  model: claude-sonnet-4-5
  api_key: \${ANTHROPIC_API_KEY}
  timeout: 90s
  max_tokens: 2000
  budget: { daily_tokens: 500000 }
  http: { allow: [{ prefix: "https://status.example.com/", headers: { Authorization: "Bearer \${STATUS_TOKEN}" } }] }
delivery:
  timeout: 5s
  codehost:
    github: { token: \${GITHUB_TOKEN} }
  teamchat: { provider: slack, webhook_url: \${SLACK_WEBHOOK_URL} }
`;

function parsed(text = YAML): Config {
  const result = parseConfig(text);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

function dirWith(text: string | undefined): string {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-prepared-'));
  if (text !== undefined) writeFileSync(join(dir, PREPARED_CONFIG_FILE), text);
  return dir;
}

function refusal(dir: string): HookError {
  try {
    readPreparedConfig(dir);
  } catch (error) {
    if (error instanceof HookError) return error;
    throw error;
  }
  throw new Error('expected the prepared configuration to be refused');
}

test('reads back exactly what config.yaml parsed to, references unresolved, and resolves as the YAML does', async () => {
  const config = parsed();
  const read = readPreparedConfig(dirWith(preparedConfigText(config)));
  expect(read).toEqual(config);
  expect(read.webhooks.github?.secret).toEqual(['${GH_OLD}', '${GH_NEW}']);
  const secrets = { get: async (name: string) => `value-of-${name}` };
  expect(await resolveConfig(read, secrets)).toEqual(await resolveConfig(config, secrets));
});

test('an empty config.yaml (every default) prepares and reads back', () => {
  const config = parsed('');
  expect(readPreparedConfig(dirWith(preparedConfigText(config)))).toEqual(config);
});

test('a missing file names itself and how to make it', () => {
  const dir = dirWith(undefined);
  const error = refusal(dir);
  expect(error.code).toBe('config_invalid');
  expect(error.message).toBe(`The prepared configuration ${join(dir, 'config.json')} is missing: package the service again (npx osls package or deploy prepares it from config.yaml)`);
});

test.each([
  ['not JSON', 'webhooks:\n  github: {}\n', 'is not valid JSON'],
  ['empty', '', 'is not valid JSON'],
  ['a bare configuration without the marker', JSON.stringify(parsed()), 'it is not a configuration prepared by hookagent'],
  ['a JSON array', '[]', 'it is not a configuration prepared by hookagent'],
  ['another format', JSON.stringify({ hookagent_prepared_config: PREPARED_CONFIG_FORMAT + 1, config: parsed() }), `it was prepared in format ${PREPARED_CONFIG_FORMAT + 1}; this bundle reads format ${PREPARED_CONFIG_FORMAT}`],
  ['no config', JSON.stringify({ hookagent_prepared_config: PREPARED_CONFIG_FORMAT }), '"config" is not an object'],
])('refused: %s', (_name, text, message) => {
  const error = refusal(dirWith(text));
  expect(error.code).toBe('config_invalid');
  expect(error.message).toContain(message);
  expect(error.message).toContain('package the service again');
});

test.each<[string, (config: any) => void, string]>([
  ['a section missing', (c) => delete c.delivery, '"config.delivery" is not an object'],
  ['the size limit as text', (c) => (c.webhooks.max_payload_size = '1MB'), '"config.webhooks.max_payload_size" is not a number of bytes'],
  ['a secret not in a list', (c) => (c.webhooks.github = { secret: '${GH}' }), '"config.webhooks.github.secret" is not a list of strings'],
  ['an unknown provider', (c) => (c.agent.provider = 'gpt'), '"config.agent.provider" is not one of echo, bedrock, openai, anthropic'],
  ['a timeout missing', (c) => delete c.agent.timeout_ms, '"config.agent.timeout_ms" is not a number'],
  ['a negative step limit', (c) => (c.agent.max_steps = -1), '"config.agent.max_steps" is not a number'],
  ['the delivery timeout missing', (c) => delete c.delivery.timeout_ms, '"config.delivery.timeout_ms" is not a number'],
  ['no code-host settings', (c) => (c.delivery.codehost = null), '"config.delivery.codehost" is not an object'],
])('refused with the field named: %s', (_name, spoil, message) => {
  const config = JSON.parse(JSON.stringify(parsed())) as Config;
  spoil(config);
  const error = refusal(dirWith(preparedConfigText(config)));
  expect(error.message).toContain(`cannot be used: ${message}; package the service again`);
});

test('a file over the size bound, or a directory in its place, is refused without reading it all', () => {
  const big = refusal(dirWith(`{"pad":"${'x'.repeat(4 * 1024 * 1024)}"}`));
  expect(big.message).toMatch(/cannot be read \(.*larger than 4 MB/);
  const dir = dirWith(undefined);
  mkdirSync(join(dir, PREPARED_CONFIG_FILE));
  expect(refusal(dir).message).toMatch(/config\.json cannot be read \(/);
});
