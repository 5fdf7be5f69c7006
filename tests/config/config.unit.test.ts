/** config.yaml: parsing, schema validation, formats, references and secrets (DESIGN §2.3). */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configDir, readConfigFile } from '../../functions/core/config/file';
import { parseConfig, resolveConfig } from '../../functions/core/config/load';
import { invalid, valid } from '../support/parse-config';


const DESIGN_EXAMPLE = `
webhooks:
  github:   { secret: \${GITHUB_WEBHOOK_SECRET} }   # a list allowed, for rotation
  gitlab:   { secret: \${GITLAB_WEBHOOK_SECRET} }
  allowed_ips: [140.82.112.0/20, 2a0a:a440::/29]
  max_payload_size: 1MB
  public_url: https://example.execute-api.eu-west-1.amazonaws.com
agent:
  provider: echo
  model: gpt-4o-mini
  base_url: https://api.openai.com/v1
  api_key: \${OPENAI_API_KEY}
  timeout: 120s
  max_steps: 8
delivery:
  timeout: 10s
  codehost:
    github: { token: \${GITHUB_TOKEN}, api_url: https://api.github.com }
    gitlab: { token: \${GITLAB_TOKEN}, api_url: https://gitlab.com/api/v4 }
  teamchat:  { provider: slack, webhook_url: \${SLACK_WEBHOOK_URL} }
  messenger: { provider: telegram, bot_token: \${TELEGRAM_BOT_TOKEN}, chat_id: "-100123", api_url: https://api.telegram.org }
aws: { region: eu-west-1, stage: prod }
`;

describe('a valid configuration', () => {
  test('the example of DESIGN §2.3 parses, with normalised values', () => {
    const config = valid(DESIGN_EXAMPLE);
    expect(config.webhooks).toEqual({
      github: { secret: ['${GITHUB_WEBHOOK_SECRET}'] },
      gitlab: { secret: ['${GITLAB_WEBHOOK_SECRET}'] },
      allowed_ips: ['140.82.112.0/20', '2a0a:a440::/29'],
      max_payload_size: 1_048_576,
      public_url: 'https://example.execute-api.eu-west-1.amazonaws.com',
    });
    expect(config.agent).toMatchObject({ provider: 'echo', timeout_ms: 120_000, max_steps: 8, api_key: '${OPENAI_API_KEY}' });
    expect(config.delivery.timeout_ms).toBe(10_000);
    expect(config.delivery.messenger).toEqual({ provider: 'telegram', bot_token: '${TELEGRAM_BOT_TOKEN}', chat_id: '-100123', api_url: 'https://api.telegram.org' });
    expect(config.aws).toEqual({ region: 'eu-west-1', stage: 'prod' });
  });

  test('an empty file means every default', () => {
    const config = valid('');
    expect(config).toEqual({
      webhooks: { max_payload_size: 1_048_576 },
      agent: { provider: 'echo', timeout_ms: 120_000, max_steps: 8 },
      delivery: { timeout_ms: 10_000, codehost: {} },
    });
  });

  test.each([
    ['1MB', 1_048_576], ['512KB', 524_288], ['2MiB', 2_097_152], ['1048576', 1_048_576], [1048576, 1_048_576], ['10MB', 10_485_760],
  ])('max_payload_size %p = %p bytes', (value, bytes) => {
    expect(valid(`webhooks: { max_payload_size: ${value} }`).webhooks.max_payload_size).toBe(bytes);
  });

  test('bare addresses in allowed_ips mean /32 and /128', () => {
    expect(valid('webhooks: { allowed_ips: [192.0.2.1, "2001:db8::1"] }').webhooks.allowed_ips).toEqual(['192.0.2.1/32', '2001:db8::1/128']);
  });

  test('a secret list for rotation, and block-style YAML', () => {
    const config = valid('webhooks:\n  github:\n    secret:\n      - ${OLD}\n      - ${NEW}\n');
    expect(config.webhooks.github?.secret).toEqual(['${OLD}', '${NEW}']);
  });

  test.each([['500ms', 500], ['2m', 120_000], [30, 30_000], ['1h', 3_600_000]])('duration %p = %p ms', (value, ms) => {
    expect(valid(`delivery: { timeout: ${value} }`).delivery.timeout_ms).toBe(ms);
  });
});

describe('configuration errors name the key path and what to write', () => {
  test('an unknown key (a typo) is an error with a suggestion', () => {
    const error = invalid('webhooks:\n  max_paylod_size: 1MB\n');
    expect(error.issues).toEqual([{ path: 'webhooks.max_paylod_size', message: "unknown key; did you mean 'max_payload_size'?" }]);
    expect(error.message).toContain('webhooks.max_paylod_size');
  });

  test('an unknown section lists the known keys when nothing is close', () => {
    const error = invalid('telemetry: { on: true }');
    expect(error.issues[0]?.path).toBe('telemetry');
    expect(error.issues[0]?.message).toContain('webhooks, agent, delivery, aws');
  });

  test('an inline secret literal is refused, and the literal is never echoed', () => {
    const error = invalid('webhooks:\n  github: { secret: hunter2-literal }\ndelivery:\n  codehost:\n    github: { token: ghp_literaltoken }\n');
    expect(error.issues.map((i) => i.path).sort()).toEqual(['delivery.codehost.github.token', 'webhooks.github.secret']);
    expect(error.issues.find((i) => i.path === 'webhooks.github.secret')?.message).toContain('${GITHUB_WEBHOOK_SECRET}');
    expect(error.message).not.toContain('hunter2-literal');
    expect(error.message).not.toContain('ghp_literaltoken');
  });

  test.each(['secret', 'token', 'api_key', 'bot_token', 'webhook_url'])('%s accepts only references', (key) => {
    const yaml = {
      secret: 'webhooks: { gitlab: { secret: "abc" } }',
      token: 'delivery: { codehost: { gitlab: { token: "abc" } } }',
      api_key: 'agent: { api_key: "abc" }',
      bot_token: 'delivery: { messenger: { provider: telegram, bot_token: "abc" } }',
      webhook_url: 'delivery: { teamchat: { provider: slack, webhook_url: "https://hooks.slack.com/services/x" } }',
    }[key] as string;
    const error = invalid(yaml);
    expect(error.issues).toEqual([expect.objectContaining({ message: expect.stringContaining('inline secrets are not allowed') })]);
  });

  test('a secret that mixes a reference with text is still a literal', () => {
    expect(invalid('webhooks: { github: { secret: "prefix-${X}" } }').issues[0]?.path).toBe('webhooks.github.secret');
  });

  test.each(['1 megabyte', 'MB', '-5', '0', '1.5XB'])('max_payload_size %p is refused', (value) => {
    const error = invalid(`webhooks: { max_payload_size: "${value}" }`);
    expect(error.issues[0]).toEqual({ path: 'webhooks.max_payload_size', message: 'must be a size such as 1MB, 512KB, 2MiB or a number of bytes' });
  });

  test('agent.models: a list of model ids; anything else is refused with its key path', () => {
    expect(valid('agent: { provider: bedrock, model: m1, models: [m2, m3] }').agent.models).toEqual(['m2', 'm3']);
    for (const bad of ['models: m2', 'models: [1]', 'models: [""]', 'models: [{ id: m2 }]']) {
      expect(invalid(`agent: { provider: bedrock, model: m1, ${bad} }`).issues[0]?.path).toMatch(/^agent\.models/);
    }
  });

  test("max_payload_size above API Gateway's 10 MB is refused", () => {
    expect(invalid('webhooks: { max_payload_size: 11MB }').issues[0]?.message).toContain('10MB');
  });

  test.each(['10.0.0.0/33', '300.1.1.1', '10.1', 'example.com', '2001:db8::/129', '10.0.0.0/8/8'])('allowed_ips entry %p is refused', (entry) => {
    const error = invalid(`webhooks: { allowed_ips: [192.0.2.1, "${entry}"] }`);
    expect(error.issues).toEqual([{ path: 'webhooks.allowed_ips[1]', message: expect.stringContaining(`'${entry}' is not an IPv4 or IPv6 address or CIDR range`) }]);
  });

  test('wrong types and enums', () => {
    const error = invalid('agent: { provider: gpt, max_steps: "eight" }\nwebhooks: []\n');
    expect(error.issues).toEqual(expect.arrayContaining([
      { path: 'agent.provider', message: 'must be one of: echo, bedrock, openai, anthropic' },
      { path: 'agent.max_steps', message: 'must be a integer' },
      { path: 'webhooks', message: 'must be a mapping' },
    ]));
  });

  test('required keys and cross-key rules', () => {
    expect(invalid('webhooks: { github: {} }').issues).toEqual([{ path: 'webhooks.github.secret', message: 'is required here' }]);
    expect(invalid('delivery: { teamchat: { provider: slack } }').issues[0]?.message).toContain('webhook_url');
    expect(invalid('agent: { provider: openai }').issues[0]).toMatchObject({ path: 'agent.model' });
    expect(invalid('aws: { region: eu-west-1 }').issues[0]).toEqual({ path: 'aws.stage', message: 'is required here' });
  });

  test('every error at once: a schema error does not hide the duration, size and address errors', () => {
    expect(invalid('agent: { provider: foo, timeout: abc }').issues).toEqual([
      { path: 'agent.provider', message: 'must be one of: echo, bedrock, openai, anthropic' },
      { path: 'agent.timeout', message: expect.stringContaining('must be a duration') },
    ]);
    const many = invalid('agent: { max_steps: 0, timeout: abc }\nwebhooks: { max_payload_size: 1XB, allowed_ips: [10.0.0.0/99] }\n').issues.map((i) => i.path);
    expect(many.sort()).toEqual(['agent.max_steps', 'agent.timeout', 'webhooks.allowed_ips[0]', 'webhooks.max_payload_size']);
    // A key the schema refused is named once, and wrong types do not break the second pass.
    expect(invalid('agent: { max_steps: "eight", timeout: [1] }\nwebhooks: []\n').issues.filter((i) => i.path === 'webhooks')).toHaveLength(1);
  });

  test('durations and URLs', () => {
    expect(invalid('delivery: { timeout: soon }').issues[0]).toMatchObject({ path: 'delivery.timeout' });
    expect(invalid('webhooks: { public_url: "not a url" }').issues[0]).toMatchObject({ path: 'webhooks.public_url' });
  });

  test('invalid YAML names the line; a non-mapping document is refused', () => {
    expect(invalid('webhooks:\n  github: [unclosed\n').message).toMatch(/not valid YAML at line \d/);
    expect(invalid('- a\n- b\n').message).toContain('must be a mapping');
  });

  test('a malformed reference is an error naming its key path', () => {
    expect(invalid('webhooks:\n  github: { secret: ${not-a-name} }\n').message).toContain('webhooks.github.secret: ${not-a-name} is not a valid reference');
  });
});

describe('resolving references', () => {
  test('every reference is replaced from the source', async () => {
    const config = valid(DESIGN_EXAMPLE);
    const env: Record<string, string> = {
      GITHUB_WEBHOOK_SECRET: 'a', GITLAB_WEBHOOK_SECRET: 'b', OPENAI_API_KEY: 'c', GITHUB_TOKEN: 'd', GITLAB_TOKEN: 'e',
      SLACK_WEBHOOK_URL: 'https://hooks.slack.com/x', TELEGRAM_BOT_TOKEN: 'f',
    };
    const resolved = await resolveConfig(config, { get: async (n) => env[n] });
    if (!resolved.ok) throw new Error(resolved.error.message);
    expect(resolved.value.webhooks.github?.secret).toEqual(['a']);
    expect(resolved.value.delivery.codehost.gitlab?.token).toBe('e');
    expect(resolved.value.delivery.teamchat?.webhook_url).toBe('https://hooks.slack.com/x');
    expect(config.webhooks.github?.secret).toEqual(['${GITHUB_WEBHOOK_SECRET}']);
  });

  test('a reference to an unset variable is an error that names it and the key', async () => {
    const resolved = await resolveConfig(valid(DESIGN_EXAMPLE), { get: async (n) => (n === 'GITHUB_WEBHOOK_SECRET' ? 'x' : undefined) }, ['webhooks']);
    expect(resolved.ok).toBe(false);
    if (resolved.ok) return;
    expect(resolved.error.issues).toEqual([
      { path: 'webhooks.gitlab.secret', message: 'references ${GITLAB_WEBHOOK_SECRET}, which is not set; set the environment variable GITLAB_WEBHOOK_SECRET' },
    ]);
  });

  test('an unset variable in one entry of a list of secrets names that entry', async () => {
    const resolved = await resolveConfig(valid('webhooks: { github: { secret: [${A_SET}, ${B_UNSET}] } }'), { get: async (n) => (n === 'A_SET' ? 'x' : undefined) }, ['webhooks']);
    expect(resolved.ok).toBe(false);
    if (!resolved.ok) expect(resolved.error.issues.map((i) => i.path)).toEqual(['webhooks.github.secret[1]']);
  });

  test('only the sections asked for are resolved', async () => {
    const resolved = await resolveConfig(valid(DESIGN_EXAMPLE), { get: async () => undefined }, ['aws']);
    expect(resolved.ok).toBe(true);
  });

  test('non-secret strings may use references too', async () => {
    const resolved = await resolveConfig(valid('webhooks: { public_url: "https://${HOST}/hooks" }'), { get: async () => 'example.com' });
    expect(resolved.ok && resolved.value.webhooks.public_url).toBe('https://example.com/hooks');
  });
});

describe('the config directory', () => {
  test('--config-dir, else $HOOKAGENT_CONFIG_DIR, else ~/.hookagent', () => {
    expect(configDir('/opt/x', { HOOKAGENT_CONFIG_DIR: '/env' })).toBe('/opt/x');
    expect(configDir(undefined, { HOOKAGENT_CONFIG_DIR: '/env' })).toBe('/env');
    expect(configDir(undefined, {})).toMatch(/\.hookagent$/);
  });

  test('reads config.yaml; a missing file means defaults', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookagent-config-'));
    expect(readConfigFile(dir).ok).toBe(true);
    writeFileSync(join(dir, 'config.yaml'), 'webhooks: { max_payload_size: 2MB }\n');
    const result = readConfigFile(dir);
    expect(result.ok && result.value.webhooks.max_payload_size).toBe(2 * 1024 * 1024);
  });
});
