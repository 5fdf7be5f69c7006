/**
 * Hunt 9 (agent2 D3): `webhook test --dry-run` prints the reply as a real run would post it.
 * The worker masks every configured secret in the reply (its findings and unread-diff note
 * too) and in the transcript, chat and log targets get the findings as a list, and a code
 * host places them on diff lines. Before, the dry run printed the loop's raw result:
 * hookagent's hidden findings block (base64) where the list goes, and the configured token
 * the model repeated, unmasked. Built CLI, local store, a local OpenAI-compatible model server.
 */
import { buildCli, runCli, tempConfigDir } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

const GITHUB_TOKEN = 'ghp_h9DryRunConfiguredToken0123456789ab';
let llm: LocalServer;
let script: unknown[] = [];
let dir: string;
const usage = { prompt_tokens: 50, completion_tokens: 10 };
const call = (id: string, name: string, args: unknown) => ({ choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] } }], usage });
const answer = (content: string) => ({ choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }], usage });
/** One finding that quotes the configured token, and an answer that repeats it. */
const review = () => [
  call('c1', 'record_finding', { path: 'deploy.sh', line: 3, severity: 'critical', body: `Hard-coded token ${GITHUB_TOKEN}: read it from the environment.` }),
  answer(`One critical problem: deploy.sh commits the token ${GITHUB_TOKEN}.`),
];

beforeAll(async () => {
  buildCli();
  llm = await startLocalServer((_req, res) => sendJson(res, 200, script.shift() ?? { error: { message: 'no script' } }));
  dir = tempConfigDir([
    'agent:', '  provider: openai', '  model: m', `  base_url: ${llm.url}/v1`,
    'delivery:', '  codehost:', '    github:', '      token: ${GITHUB_TOKEN}', '',
  ].join('\n'), 'hookagent-dry-reply-');
}, 90_000);
afterAll(async () => llm?.close());

const hk = (...args: string[]) => runCli(['--config-dir', dir, ...args], { GITHUB_TOKEN });
const payload = JSON.stringify({ title: 'add deploy script' });

test('--json: the reply as chat and log get it (findings listed, secrets masked), with its findings apart', async () => {
  expect(await hk('webhook', 'subscribe', 'review', '--skills', 'code-review', '--deliver', 'log', '--prompt', 'Review {title}')).toMatchObject({ code: 0 });
  script = review();
  const result = await hk('webhook', 'test', 'review', '--dry-run', '--json', '--payload', payload);
  expect(result.code).toBe(0);
  expect(result.stdout).not.toContain(GITHUB_TOKEN);
  const out = JSON.parse(result.stdout) as Record<string, unknown>;
  expect(out).toMatchObject({
    would_post: true, unread: null,
    reply: 'One critical problem: deploy.sh commits the token ••••••.\n\n**Findings**\n- **critical** `deploy.sh` line 3: Hard-coded token ••••••: read it from the environment.',
    findings: [{ path: 'deploy.sh', line: 3, side: 'RIGHT', severity: 'critical', body: 'Hard-coded token ••••••: read it from the environment.' }],
  });
});

test('text: what each subscribed target would get; a code host has the findings inline', async () => {
  expect(await hk('webhook', 'subscribe', 'pr-review', '--events', 'github:pull_request', '--skills', 'code-review', '--deliver', 'codehost_comment,log', '--prompt', 'Review {pull_request.title}')).toMatchObject({ code: 0 });
  script = review();
  const result = await hk('webhook', 'test', 'pr-review', '--dry-run', '--payload', JSON.stringify({ action: 'opened', pull_request: { number: 7, title: 'add deploy script' } }));
  expect(result).toMatchObject({ code: 0 });
  expect(result.stdout).not.toContain(GITHUB_TOKEN);
  expect(result.stdout).not.toContain('hookagent-findings');
  expect(result.stdout).toContain([
    'Reply (would be posted to log):', 'One critical problem: deploy.sh commits the token ••••••.', '', '**Findings**',
    '- **critical** `deploy.sh` line 3: Hard-coded token ••••••: read it from the environment.',
  ].join('\n'));
  expect(result.stdout).toContain([
    'Reply (would be posted to codehost_comment):', 'One critical problem: deploy.sh commits the token ••••••.', '',
    '1 inline finding(s): deploy.sh:3',
  ].join('\n'));
});
