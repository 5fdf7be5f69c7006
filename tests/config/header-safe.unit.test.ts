/**
 * `${VAR}` values sent as HTTP headers (tokens, API keys) are checked when the
 * configuration is resolved (hunt 5 D3): a value with a character no header can carry is a
 * configuration error naming the key and the variable, never echoing the value.
 */
import { parseConfig, resolveConfig } from '../../functions/core/config/load';

const config = (yaml: string) => {
  const parsed = parseConfig(yaml);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.value;
};
const resolve = (yaml: string, env: Record<string, string>) => resolveConfig(config(yaml), { get: async (name) => env[name] });

const GITHUB = 'delivery:\n  codehost:\n    github: { token: ${GITHUB_TOKEN} }\n';

test.each([
  ['github_pat_…', '"…" (U+2026) at character 12'],
  ['ghp_“quoted”', '"“" (U+201C) at character 5'],
  ['ghp_abc def', 'a space at character 8'],
  ['ghp_abc\tdef', 'a tab at character 8'],
  [' ghp_abc', 'a space at character 1'],
  ['ghp_é', '"é" (U+00E9) at character 5'],
])('token %j is refused, naming the key and where', async (value, where) => {
  const result = await resolve(GITHUB, { GITHUB_TOKEN: value });
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.error.message).toContain(`delivery.codehost.github.token: the value of \${GITHUB_TOKEN} has ${where}, which cannot be sent in an HTTP header`);
  expect(result.error.message).not.toContain(value.trim());
});

test('every header-borne key is checked; webhook secrets are not headers', async () => {
  const yaml = 'agent: { provider: anthropic, model: claude-haiku-4-5, api_key: ${KEY} }\ndelivery:\n  codehost:\n    gitlab: { token: ${GL} }\n  teamchat: { provider: slack, bot_token: ${TG}, channel: C1 }\n  messenger: { provider: telegram, bot_token: ${TGM} }\nwebhooks:\n  github: { secret: ${GH_SECRET} }\n';
  const result = await resolve(yaml, { KEY: 'sk …', GL: 'glpat-x y', TG: 'xoxb …', TGM: '1:ab', GH_SECRET: 'a secret with spaces …' });
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.error.issues.map((i) => i.path)).toEqual(['agent.api_key', 'delivery.codehost.gitlab.token', 'delivery.teamchat.bot_token']);
});

test('well-formed tokens resolve as before', async () => {
  const result = await resolve(GITHUB, { GITHUB_TOKEN: 'github_pat_11ABCDEFG0123456789_abcdefXYZ' });
  expect(result.ok).toBe(true);
});
