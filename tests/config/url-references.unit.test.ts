/**
 * Hunt 9 D3: URL keys written as `${VAR}` references are checked once resolved, by the same
 * rule as inline ones (an http(s) URL): `public_url: ${PUB}` with PUB=example.com, or a
 * Slack webhook URL without its scheme, is a configuration error naming the key and the
 * variable, never the value (a webhook URL is a secret).
 */
import { parseConfig, resolveConfig } from '../../functions/core/config/load';

const config = (yaml: string) => {
  const parsed = parseConfig(yaml);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.value;
};
const resolve = (yaml: string, env: Record<string, string>) => resolveConfig(config(yaml), { get: async (name) => env[name] });

const URL_KEYS = `webhooks: { public_url: \${PUB} }
agent: { provider: openai, model: gpt-4o-mini, base_url: \${AGENT_URL} }
delivery:
  codehost:
    github: { token: \${GH}, api_url: \${GH_API} }
    gitlab: { token: \${GL}, api_url: "https://\${GL_HOST}/api/v4" }
  teamchat: { provider: slack, webhook_url: \${SLACK_WEBHOOK_URL}, api_url: \${SLACK_API} }
  messenger: { provider: telegram, bot_token: \${TG}, api_url: \${TG_API} }
`;
const TOKENS = { GH: 'ghp_x', GL: 'glpat-x', TG: '1:x' };

test('every URL key whose resolved value is not an http(s) URL is refused, naming the key and the variable, never the value', async () => {
  const values = {
    PUB: 'hooks.acme.test', AGENT_URL: 'api.openai.com/v1', GH_API: 'ftp://ghe.example/api', GL_HOST: 'gitlab acme.test',
    SLACK_WEBHOOK_URL: 'hooks.slack.com/services/T0/B0/secretpart', SLACK_API: 'chat-api', TG_API: '//api.telegram.org',
  };
  const result = await resolve(URL_KEYS, { ...TOKENS, ...values });
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.error.issues).toEqual([
    { path: 'webhooks.public_url', message: 'the value of ${PUB} is not an http(s) URL: set PUB to a whole URL with its scheme, e.g. https://example.com' },
    { path: 'agent.base_url', message: 'the value of ${AGENT_URL} is not an http(s) URL: set AGENT_URL to a whole URL with its scheme, e.g. https://example.com' },
    { path: 'delivery.codehost.github.api_url', message: 'the value of ${GH_API} is not an http(s) URL: set GH_API to a whole URL with its scheme, e.g. https://example.com' },
    { path: 'delivery.codehost.gitlab.api_url', message: 'is not an http(s) URL once ${GL_HOST} is filled in (e.g. https://example.com): check the value of GL_HOST' },
    { path: 'delivery.teamchat.api_url', message: 'the value of ${SLACK_API} is not an http(s) URL: set SLACK_API to a whole URL with its scheme, e.g. https://example.com' },
    { path: 'delivery.teamchat.webhook_url', message: 'the value of ${SLACK_WEBHOOK_URL} is not an http(s) URL: set SLACK_WEBHOOK_URL to a whole URL with its scheme, e.g. https://example.com' },
    { path: 'delivery.messenger.api_url', message: 'the value of ${TG_API} is not an http(s) URL: set TG_API to a whole URL with its scheme, e.g. https://example.com' },
  ]);
  for (const value of Object.values(values)) expect(result.error.message).not.toContain(value);
});

test('well-formed URLs resolve, trimmed of trailing slashes as inline ones are (a webhook URL is kept as is)', async () => {
  const result = await resolve(URL_KEYS, {
    ...TOKENS, PUB: 'https://hooks.example.com/', AGENT_URL: 'http://127.0.0.1:8080/v1', GH_API: 'https://ghe.example/api/v3/', GL_HOST: 'gitlab.example.com',
    SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T0/B0/x/', SLACK_API: 'https://slack.com/api', TG_API: 'https://api.telegram.org',
  });
  if (!result.ok) throw new Error(result.error.message);
  const { webhooks, agent, delivery } = result.value;
  expect([webhooks.public_url, agent.base_url, delivery.codehost.github?.api_url, delivery.codehost.gitlab?.api_url, delivery.teamchat?.webhook_url])
    .toEqual(['https://hooks.example.com', 'http://127.0.0.1:8080/v1', 'https://ghe.example/api/v3', 'https://gitlab.example.com/api/v4', 'https://hooks.slack.com/services/T0/B0/x/']);
});

test('only the sections asked for are checked', async () => {
  const result = await resolveConfig(config(URL_KEYS), { get: async (name) => ({ ...TOKENS, PUB: 'https://ok.example' } as Record<string, string>)[name] }, ['webhooks']);
  expect(result.ok && result.value.webhooks.public_url).toBe('https://ok.example');
});
