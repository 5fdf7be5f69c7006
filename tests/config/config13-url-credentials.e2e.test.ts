/**
 * A URL key holding a user name or password (`http://user:password@proxy/v1`, an
 * OpenAI-compatible proxy behind basic auth) is refused when the configuration loads, by key
 * and without its value (hunt 13, config D2). Before, it was accepted, every agent run failed
 * (fetch refuses such a URL, and its error repeats it), and the password was written to
 * serve's log, the event record and the CLI's output.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCli, runCli, tempConfigDir } from '../support/cli';
import { startServe, stopServe } from '../support/serve';

beforeAll(() => buildCli(), 60_000);

test('written in config.yaml: every command refuses it, naming the key, never the password', async () => {
  const dir = tempConfigDir('agent: { provider: openai, model: m, base_url: "http://proxyuser:SEKRITPW@127.0.0.1:9/v1", api_key: ${OPENAI_API_KEY} }\n', 'hookagent-cred-');
  const listed = await runCli(['--config-dir', dir, 'webhook', 'list']);
  expect(listed.code).toBe(1);
  expect(listed.stderr).toContain('agent.base_url: must not hold a user name or password');
  expect(listed.stderr).not.toContain('SEKRITPW');
}, 60_000);

test('from a ${VAR} in .env: serve refuses to start, naming the key and the variable, never the password', async () => {
  const dir = tempConfigDir('agent: { provider: openai, model: m, base_url: ${LLM_URL}, api_key: ${OPENAI_API_KEY} }\n', 'hookagent-cred-');
  writeFileSync(join(dir, '.env'), 'OPENAI_API_KEY=sk-test\nLLM_URL=http://proxyuser:SEKRITPW@127.0.0.1:9/v1\n');
  // A serve that starts anyway (the defect) is stopped, so the run leaves nothing behind.
  const started = await startServe(dir, {}).then(async (serve) => {
    await stopServe(serve);
    return 'listening';
  }, (error: unknown) => String(error));
  expect(started).toContain('agent.base_url');
  expect(started).toContain('${LLM_URL}');
  expect(started).not.toContain('SEKRITPW');
}, 60_000);
