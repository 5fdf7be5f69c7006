/**
 * A push that lands after the model read the diff but before delivery (hunt 12 D1), through
 * `hookagent serve`, `--skills code-review` and a scripted Chat Completions model:
 * 1. the event names commit A; the model calls get_change_diff and reads A's diff of
 *    src/calc.ts (a new file; line 12 is `  return a / b;`);
 * 2. it records a finding on line 12 ("Division by zero");
 * 3. while it writes its answer, the author pushes B, which adds 3 import lines at the
 *    top: `return a / b;` is line 15 of B, and line 12 of B is `  const scale = 2;`.
 * The comment sits on `return a / b;`: on A's line 12 (GitHub `commit_id` A; GitLab the
 * position of the merge request's version at A), and the sticky footer names A. Before,
 * line 12 was posted against B: "Division by zero" was shown on `const scale = 2;`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { buildCli, runCli } from '../support/cli';
import { FAKE_BASE_SHA, FAKE_START_SHA, startFakeCodehost, type FakeCodehost } from '../support/fake-codehost';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';

const A = 'a'.repeat(40);
const B = 'd'.repeat(40);
const BODY_A = ['export function ratio(a: number, b: number) {', '  // ratio of a to b', '  const x = 1;', '  const y = 2;', '  const z = 3;', '  const w = 4;', '  const v = 5;', '  const u = 6;', '  const t = 7;', '  const s = 8;', '  const r = 9;', '  return a / b;', '}', ''];
const BODY_B = ['import { a } from "./a";', 'import { b } from "./b";', 'import { c } from "./c";', ...BODY_A.slice(0, 11).map((l, i) => (i === 8 ? '  const scale = 2;' : l)), ...BODY_A.slice(11)];
const added = (lines: string[]) => `@@ -0,0 +1,${lines.length - 1} @@\n${lines.slice(0, -1).map((l) => `+${l}`).join('\n')}`;
const textAt: Record<string, string[]> = { [A]: BODY_A, [B]: BODY_B };

const GH_SECRET = 'push-gh-secret';
const GL_SECRET = 'push-gl-secret';
const env = { GH_SECRET, GL_SECRET, GITHUB_TOKEN: 'ghp_push', GITLAB_TOKEN: 'glpat-push', LLM_KEY: 'sk-local', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };

let host: FakeCodehost;
let llm: LocalServer;
let dir: string;
let serve: Serve;
const hk = (...args: string[]) => runCli(['--config-dir', dir, ...args], env);

const githubFiles = (sha: string) => [{ filename: 'src/calc.ts', status: 'added', additions: textAt[sha]!.length - 1, deletions: 0, patch: added(textAt[sha]!) }];
const gitlabDiffs = (sha: string) => [{ old_path: 'src/calc.ts', new_path: 'src/calc.ts', diff: `${added(textAt[sha]!)}\n`, new_file: true, renamed_file: false, deleted_file: false }];

/** The change is at `sha` now; the host keeps its diff at each earlier head (GitHub compare from the base, GitLab versions). */
function at(sha: string) {
  host.pullHead = sha;
  host.mrHead = sha;
  host.files = githubFiles(sha);
  host.mrDiffs = gitlabDiffs(sha);
  host.diffsAt.set(sha, { files: githubFiles(sha), mrDiffs: gitlabDiffs(sha) });
}

beforeAll(async () => {
  buildCli();
  host = await startFakeCodehost();
  // The model: read the diff, record a finding on the line it read as `return a / b;`, then answer.
  // The push lands while it writes the answer (after its last tool call).
  llm = await startLocalServer((req, res) => {
    const { messages } = JSON.parse(req.body) as { messages: Array<{ role: string; content?: string }> };
    const tools = messages.filter((m) => m.role === 'tool');
    const reply = (message: Record<string, unknown>, finish: string) => sendJson(res, 200, {
      id: 'c', object: 'chat.completion', created: 1, model: 'm', usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: finish }],
    });
    if (tools.length === 0) return reply({ tool_calls: [{ id: 't1', type: 'function', function: { name: 'get_change_diff', arguments: '{}' } }] }, 'tool_calls');
    if (tools.length === 1) {
      const diff = tools[0]!.content ?? '';
      const lines = diff.split('\n').filter((l) => l.startsWith('+'));
      const at = lines.findIndex((l) => l.includes('return a / b;')) + 1;
      return reply({ tool_calls: [{ id: 't2', type: 'function', function: { name: 'record_finding', arguments: JSON.stringify({ path: 'src/calc.ts', line: at, side: 'RIGHT', severity: 'critical', body: 'Division by zero when b is 0.' }) } }] }, 'tool_calls');
    }
    at(B);
    return reply({ content: 'One critical finding: division by zero.' }, 'stop');
  });
  dir = mkdtempSync(join(tmpdir(), 'reviewq-push-'));
  writeFileSync(join(dir, 'config.yaml'), [
    'webhooks: { github: { secret: ${GH_SECRET} }, gitlab: { secret: ${GL_SECRET} } }',
    'agent:', '  provider: openai', '  model: m', `  base_url: ${llm.url}/v1`, '  api_key: ${LLM_KEY}',
    'delivery:', '  timeout: 2s',
    `  codehost: { github: { token: \${GITHUB_TOKEN}, api_url: "${host.url}" }, gitlab: { token: \${GITLAB_TOKEN}, api_url: "${host.url}/api/v4" } }`,
  ].join('\n'));
  serve = await startServe(dir, env);
  expect((await hk('webhook', 'subscribe', 'review', '--events', 'pull_request.synchronize,gitlab:merge_request', '--skills', 'code-review', '--deliver', 'codehost_comment', '--prompt', 'Review the change.')).code).toBe(0);
}, 90_000);

afterAll(async () => {
  if (serve) await stopServe(serve);
  await host?.close();
  await llm?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  host.reset();
  llm.requests.length = 0;
  at(A);
});

async function finished(n: number): Promise<boolean> {
  const listed = JSON.parse((await hk('webhook', 'events', 'review', '--json')).stdout) as Array<{ status: string }>;
  return listed.filter((e) => e.status === 'delivered' || e.status === 'failed').length >= n;
}

test('GitHub: the inline comment stays on the line the model flagged after a push during the run', async () => {
  const body = JSON.stringify({ action: 'synchronize', number: 7, pull_request: { number: 7, title: 't', body: 'x', head: { sha: A } }, repository: { full_name: 'octo/widgets' } });
  const res = await fetch(`${serve.url}/webhooks/github`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-github-event': 'pull_request', 'x-github-delivery': 'push-gh-1', 'x-hub-signature-256': signHub(body, GH_SECRET) } });
  expect(res.status).toBe(202);
  await eventually(() => finished(1), 'the review to finish', 30_000);
  const review = host.reviews[0] as { commit_id?: string; comments: Array<{ line: number }> };
  const comment = review.comments[0]!;
  const sticky = host.comments.get('/repos/octo/widgets/issues/7')?.[0]?.body ?? '';
  expect({
    footerNames: /reviewed `([0-9a-f]{12})`/.exec(sticky)?.[1],
    commitId: review.commit_id?.slice(0, 12),
    line: comment.line,
    commentSitsOn: textAt[review.commit_id ?? B]![comment.line - 1],
  }).toEqual({ footerNames: A.slice(0, 12), commitId: A.slice(0, 12), line: 12, commentSitsOn: '  return a / b;' });
  expect(sticky).toContain(`the change moved on to \`${B.slice(0, 12)}\` while the review ran`);
}, 60_000);

test('GitLab: the discussion stays on the line the model flagged after a push during the run', async () => {
  const fixture = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'merge_request.json'), 'utf8')) as { object_attributes: { last_commit: object } & Record<string, unknown> } & Record<string, unknown>;
  const payload = { ...fixture, object_attributes: { ...fixture.object_attributes, action: 'update', oldrev: '1'.repeat(40), last_commit: { ...fixture.object_attributes.last_commit, id: A } } };
  const body = JSON.stringify(payload);
  const res = await fetch(`${serve.url}/webhooks/gitlab`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-gitlab-event': 'Merge Request Hook', 'x-gitlab-token': GL_SECRET, 'x-gitlab-event-uuid': 'push-gl-1' } });
  expect(res.status).toBe(202);
  await eventually(() => finished(2), 'the review to finish', 30_000);
  const note = host.discussions[0]!.notes[0]!;
  const position = note.position as { base_sha: string; start_sha: string; head_sha: string; new_line: number };
  expect({
    refs: [position.base_sha, position.start_sha].map((sha) => sha.slice(0, 12)),
    headSha: position.head_sha.slice(0, 12),
    line: position.new_line,
    noteSitsOn: textAt[position.head_sha]![position.new_line - 1],
  }).toEqual({ refs: [FAKE_BASE_SHA.slice(0, 12), FAKE_START_SHA.slice(0, 12)], headSha: A.slice(0, 12), line: 12, noteSitsOn: '  return a / b;' });
}, 60_000);
