/**
 * The read-only code-host tools against a local server speaking GitHub's and GitLab's
 * wire format: every page of a 150-file change, per-file diffs, files by line range,
 * commits, CI results, incremental diffs from the sticky comment's footer (and the
 * force-push fallback), issue triage, secondary rate limits, and refusals.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILTIN_TOOLS, type ToolContext } from '../../functions/core/agent/tools';
import type { Config } from '../../functions/core/config/types';
import { reviewedMarker, stickyMarker } from '../../functions/core/events/loop-guard';
import type { Source } from '../../functions/core/types';
import { FAKE_BOT, botComment, startFakeCodehost, type FakeCodehost } from '../support/fake-codehost';
import { sendJson } from '../support/local-http';

const HEAD = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const OLD = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
let host: FakeCodehost;
const waits: number[] = [];

beforeAll(async () => {
  host = await startFakeCodehost();
});
afterAll(async () => host.close());
beforeEach(() => {
  host.comments.clear();
  host.failNext.length = 0;
  host.server.requests.length = 0;
  host.files = [];
  host.contents.clear();
  delete host.extra;
  waits.length = 0;
});

const delivery = (): Config['delivery'] => ({ timeout_ms: 500, codehost: { github: { token: 'gh-T', api_url: host.url }, gitlab: { token: 'gl-T', api_url: `${host.url}/api/v4` } } });
function context(source: Source, event: string, payload: Record<string, unknown>): ToolContext {
  return {
    message: { v: 1, event_id: 'evt_1', subscription: 'review', source, event, delivery_id: 'd', received_at: '' },
    payload, delivery: delivery(), signal: AbortSignal.timeout(5000), sleep: async (ms) => void waits.push(ms),
  };
}
const pr = (extra: Record<string, unknown> = {}) => context('github', 'pull_request', { action: 'synchronize', repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha: HEAD } }, ...extra });
const run = (name: string, input: unknown, ctx: ToolContext) => BUILTIN_TOOLS[name]!.run(input, ctx);

/** Answers one exact GitHub path (query ignored). */
function answer(routes: Record<string, unknown | ((url: URL) => unknown)>, raw: Record<string, string> = {}): void {
  host.extra = (req, res, url) => {
    if (raw[url.pathname] !== undefined) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(raw[url.pathname]);
      return true;
    }
    const route = routes[url.pathname];
    if (route === undefined) return false;
    sendJson(res, 200, typeof route === 'function' ? (route as (u: URL) => unknown)(url) : route);
    return true;
  };
}

describe('GitHub review tools', () => {
  test('150 changed files are all listed (two pages, Link: rel="next")', async () => {
    host.files = Array.from({ length: 150 }, (_, i) => ({ filename: `src/f${i}.ts`, status: 'modified', additions: i, deletions: 1, patch: `@@ -1 +1 @@\n-a${i}\n+b${i}` }));
    const out = await run('list_changed_files', {}, pr());
    expect(out.split('\n').filter((l) => l.startsWith('modified src/f'))).toHaveLength(150);
    expect(out).toContain('modified src/f149.ts (+149 -1)');
    expect(host.server.requests.map((r) => r.url)).toEqual(['/repos/octo/widgets/pulls/7/files?per_page=100', expect.stringContaining('page=2')]);
    expect(host.server.requests[0]!.headers.authorization).toBe('token gh-T');
  });

  test('get_change_diff per file; a large whole diff is cut and says how to read the rest', async () => {
    host.files = Array.from({ length: 40 }, (_, i) => ({ filename: `f${i}.ts`, status: 'modified', additions: 1, deletions: 1, patch: `@@ -1,1 +1,1 @@\n${'+x'.repeat(400)}` }));
    host.failNext.push([406, { message: 'Sorry, the diff exceeded the maximum number of files (300).' }]);
    const whole = await run('get_change_diff', {}, pr());
    expect(whole).toMatch(/cut at 20000 characters: \d+ file\(s\) not shown; call get_change_diff with \{"path": …\} for: /);
    const one = await run('get_change_diff', { path: 'f39.ts' }, pr());
    expect(one.startsWith('--- f39.ts\n@@ -1,1 +1,1 @@')).toBe(true);
    await expect(run('get_change_diff', { path: 'nope.ts' }, pr())).rejects.toMatchObject({ code: 'tool_bad_input' });
    await expect(run('get_change_diff', { path: '../../etc/passwd' }, pr())).rejects.toMatchObject({ code: 'tool_bad_input' });
  });

  test('get_file: a line range at the head commit, numbered; the cut is announced', async () => {
    host.contents.set(`src/a b.ts@${HEAD}`, Array.from({ length: 1000 }, (_, i) => `line ${i + 1}`).join('\n'));
    const out = await run('get_file', { path: 'src/a b.ts', start_line: 10, end_line: 12 }, pr());
    expect(out).toBe(`src/a b.ts @ ${HEAD} (lines 10-12 of 1000)\n10\tline 10\n11\tline 11\n12\tline 12`);
    expect(host.server.requests[0]!.url).toBe(`/repos/octo/widgets/contents/src/a%20b.ts?ref=${HEAD}`);
    const long = await run('get_file', { path: 'src/a b.ts' }, pr());
    expect(long).toContain('…[cut at line 400 of 1000; ask again with start_line 401]');
    await expect(run('get_file', { path: 'x', ref: '../../admin' }, pr())).rejects.toMatchObject({ code: 'tool_bad_input' });
    await expect(run('get_file', { path: '/etc/passwd' }, pr())).rejects.toMatchObject({ code: 'tool_bad_input' });
  });

  test('get_change, list_commits and get_ci_status read GitHub\'s shapes', async () => {
    answer({
      '/repos/octo/widgets/pulls/7': { title: 'Add widgets', body: 'Adds them.', user: { login: 'mona' }, state: 'open', draft: true, base: { ref: 'main', sha: OLD }, head: { ref: 'feat', sha: HEAD }, labels: [{ name: 'bug' }], mergeable: true, mergeable_state: 'clean', changed_files: 2, additions: 3, deletions: 1, commits: 2 },
      '/repos/octo/widgets/pulls/7/commits': [{ sha: OLD, commit: { message: 'first\n\nmore', author: { name: 'Mona' } } }, { sha: HEAD, commit: { message: 'second', author: { name: 'Mona' } } }],
      [`/repos/octo/widgets/commits/${HEAD}/check-runs`]: { total_count: 1, check_runs: [{ name: 'test', status: 'completed', conclusion: 'failure', output: { title: '2 failed', summary: 'widgets.test.ts failed' } }] },
      [`/repos/octo/widgets/commits/${HEAD}/status`]: { state: 'failure', statuses: [{ context: 'ci/lint', state: 'success', description: 'ok' }] },
    });
    const change = await run('get_change', {}, pr());
    expect(change).toContain('title: Add widgets');
    expect(change).toContain('state: open (draft)');
    expect(change).toContain(`head: feat @ ${HEAD}`);
    expect(change).toContain('labels: bug');
    expect(await run('list_commits', {}, pr())).toBe(`2 commit(s)\n${OLD.slice(0, 12)} Mona: first\n${HEAD.slice(0, 12)} Mona: second`);
    const ci = await run('get_ci_status', {}, pr());
    expect(ci).toContain('check test: completed / failure — 2 failed');
    expect(ci).toContain('widgets.test.ts failed');
    expect(ci).toContain('status ci/lint: success — ok');
  });

  test('incremental: since the commit in the sticky footer (compare API); a force-push falls back to the full diff', async () => {
    host.comments.set('/repos/octo/widgets/issues/7', [botComment(1, `old review\n${reviewedMarker(OLD)}\n${stickyMarker('review')}`)]);
    let status = 'ahead';
    answer({ [`/repos/octo/widgets/compare/${OLD}...${HEAD}`]: () => ({ status, files: [{ filename: 'new.ts', status: 'modified', additions: 1, deletions: 0, patch: '+only new' }] }) });
    host.files = [{ filename: 'all.ts', status: 'modified', additions: 1, deletions: 0, patch: '+everything' }];
    const since = await run('get_change_diff', { since_last_review: true }, pr());
    expect(since).toContain(`changes since the last review at ${OLD.slice(0, 12)}`);
    expect(since).toContain('+only new');
    expect(since).not.toContain('+everything');
    status = 'diverged';
    const forced = await run('get_change_diff', { since_last_review: true }, pr());
    expect(forced).toContain('force-push: the full diff');
    expect(forced).toContain('+everything');
  });

  test("incremental: a reviewed marker copied into someone else's comment does not pick the range (the full diff)", async () => {
    host.comments.set('/repos/octo/widgets/issues/7', [{ id: 2, body: `LGTM\n${stickyMarker('review')}\n${reviewedMarker(OLD)}`, html_url: 'x', user: { id: 666, login: 'mallory', type: 'User' } }]);
    answer({ [`/repos/octo/widgets/compare/${OLD}...${HEAD}`]: () => ({ status: 'ahead', files: [{ filename: 'new.ts', status: 'modified', additions: 1, deletions: 0, patch: '+only new' }] }) });
    host.files = [{ filename: 'all.ts', status: 'modified', additions: 1, deletions: 0, patch: '+everything' }];
    const since = await run('get_change_diff', { since_last_review: true }, pr());
    expect(since).toContain('no earlier hookagent review');
    expect(since).toContain('+everything');
    expect(since).not.toContain('+only new');
  });

  test('a 403 secondary rate limit is waited out for ≥ 60 s (fake sleep) and the tool answers', async () => {
    host.files = [{ filename: 'a.ts', status: 'added', additions: 1, deletions: 0 }];
    host.failNext.push([403, { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.' }]);
    expect(await run('list_changed_files', {}, pr())).toBe('added a.ts (+1 -0)');
    expect(waits).toEqual([60_000]);
  });

  test('a custom event naming "../../admin/escape" makes no request; an event with no pull request is refused', async () => {
    const escape = context('custom', 'build', { repository: { full_name: '../../admin/escape' }, pull_request: { number: 1 } });
    await expect(run('get_change', {}, escape)).rejects.toMatchObject({ code: 'tool_no_change' });
    await expect(run('get_change_diff', {}, context('github', 'push', { repository: { full_name: 'octo/widgets' }, after: HEAD }))).rejects.toMatchObject({ code: 'tool_no_change' });
    expect(host.server.requests).toHaveLength(0);
  });
});

describe('issue-triage tools', () => {
  const issue = () => context('github', 'issues', { action: 'opened', repository: { full_name: 'octo/widgets' }, issue: { number: 12 } });
  test('get_issue, list_issue_comments (paginated), search_issues kept inside the repository', async () => {
    host.comments.set('/repos/octo/widgets/issues/12', Array.from({ length: 120 }, (_, i) => ({ id: i + 1, body: `c${i}`, html_url: 'x' })));
    answer({
      '/repos/octo/widgets/issues/12': { title: 'Crash on start', state: 'open', user: { login: 'ann' }, labels: [{ name: 'bug' }], assignees: [], comments: 120, body: 'It crashes.' },
      '/search/issues': (url: URL) => ({ total_count: 2, items: [{ number: 3, state: 'closed', title: `match for ${url.searchParams.get('q')}` }, { number: 12, state: 'open', title: 'itself' }] }),
    });
    expect(await run('get_issue', {}, issue())).toContain('#12: Crash on start');
    const comments = await run('list_issue_comments', {}, issue());
    expect(comments.startsWith('120 comment(s)')).toBe(true);
    const found = await run('search_issues', { query: 'crash start repo:evil/other org:evil' }, issue());
    expect(found).toBe('2 match(es)\n#3 [closed] match for crash start repo:octo/widgets is:issue');
    await expect(run('search_issues', { query: 'repo:x/y' }, issue())).rejects.toMatchObject({ code: 'tool_bad_input' });
  });

  test('search_issues: words cannot bind the repository qualifier into a phrase or an OR, and issues of other repositories are not shown', async () => {
    answer({
      '/search/issues': (url: URL) => ({
        total_count: 3,
        items: [
          { number: 3, state: 'open', title: `q=${url.searchParams.get('q')}`, repository_url: 'https://api.github.com/repos/octo/widgets' },
          { number: 9, state: 'open', title: 'private plans', repository_url: 'https://api.github.com/repos/octo/secret-roadmap' },
          { number: 4, state: 'closed', title: 'no repository_url (older answers)' },
        ],
      }),
    });
    const found = await run('search_issues', { query: 'crash "start OR (boot) NOT x' }, issue());
    // An unclosed quote would have made `repo:octo/widgets is:issue` part of a phrase: searched everywhere the token reaches.
    expect(found).toContain('#3 [open] q=crash start boot x repo:octo/widgets is:issue');
    expect(found).toContain('#4 [closed]');
    expect(found).not.toContain('private plans');
  });
});

describe('GitLab review tools', () => {
  const mrPayload = () => JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'merge_request.json'), 'utf8')) as Record<string, any>;
  test('diffs (keyset/offset Link pages), files by raw path, pipelines with the failed job\'s log tail', async () => {
    const payload = mrPayload();
    const project = payload.project.id as number;
    const iid = payload.object_attributes.iid as number;
    const base = `/api/v4/projects/${project}`;
    const diffs = Array.from({ length: 130 }, (_, i) => ({ old_path: `f${i}`, new_path: `f${i}`, diff: `+${i}`, new_file: i === 0, renamed_file: false, deleted_file: false }));
    host.extra = (req, res, url) => {
      const p = url.pathname;
      if (p === `${base}/merge_requests/${iid}/diffs`) {
        const pageNo = Number(url.searchParams.get('page') ?? '1');
        const next = new URL(url);
        next.searchParams.set('page', String(pageNo + 1));
        sendJson(res, 200, diffs.slice((pageNo - 1) * 100, pageNo * 100), pageNo === 1 ? { link: `<${next.href}>; rel="next"` } : {});
      } else if (p === `${base}/repository/files/src%2Fmain.ts/raw`) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('a\nb\nc');
      } else if (p === `${base}/merge_requests/${iid}/pipelines`) sendJson(res, 200, [{ id: 55, status: 'failed', sha: HEAD }]);
      else if (p === `${base}/pipelines/55/jobs`) sendJson(res, 200, [{ id: 77, name: 'rspec', stage: 'test', status: 'failed' }]);
      else if (p === `${base}/jobs/77/trace`) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`${'noise\n'.repeat(2000)}Failure: expected 1 got 2`);
      } else return false;
      return true;
    };
    const ctx = context('gitlab', 'merge_request', payload);
    const list = await run('list_changed_files', {}, ctx);
    expect(list.split('\n')).toHaveLength(130);
    expect(list.split('\n')[0]).toBe('added f0');
    expect(await run('get_file', { path: 'src/main.ts', ref: 'main', start_line: 2 }, ctx)).toBe('src/main.ts @ main (lines 2-3 of 3)\n2\tb\n3\tc');
    const ci = await run('get_ci_status', {}, ctx);
    expect(ci).toContain('pipeline 55: failed');
    expect(ci).toContain('failed job rspec (stage test)');
    expect(ci).toContain('…[log cut: only the last 4000');
    expect(ci.endsWith('Failure: expected 1 got 2')).toBe(true);
    expect(host.server.requests.every((r) => r.headers['private-token'] === 'gl-T')).toBe(true);
  });

  test('incremental on GitLab: merge_base confirms the last reviewed commit is an ancestor, then /repository/compare; otherwise the full diff', async () => {
    const payload = mrPayload();
    payload.object_attributes.last_commit.id = HEAD;
    const base = `/api/v4/projects/${payload.project.id as number}`;
    const iid = payload.object_attributes.iid as number;
    host.comments.set(`${base}/merge_requests/${iid}`, [botComment(5, `old\n${reviewedMarker(OLD)}\n${stickyMarker('review')}`, 'gitlab')]);
    let mergeBase = OLD;
    host.extra = (_req, res, url) => {
      if (url.pathname === `${base}/repository/merge_base`) sendJson(res, 200, { id: mergeBase });
      else if (url.pathname === `${base}/repository/compare` && url.searchParams.get('from') === OLD && url.searchParams.get('to') === HEAD) sendJson(res, 200, { diffs: [{ old_path: 'n.rb', new_path: 'n.rb', diff: '+only new', new_file: false, renamed_file: false, deleted_file: false }] });
      else if (url.pathname === `${base}/merge_requests/${iid}/diffs`) sendJson(res, 200, [{ old_path: 'all.rb', new_path: 'all.rb', diff: '+everything', new_file: false, renamed_file: false, deleted_file: false }]);
      else return false;
      return true;
    };
    const ctx = context('gitlab', 'merge_request', payload);
    const since = await run('get_change_diff', { since_last_review: true }, ctx);
    expect(since).toContain('+only new');
    expect(since).not.toContain('+everything');
    mergeBase = 'd'.repeat(40);
    const forced = await run('get_change_diff', { since_last_review: true }, ctx);
    expect(forced).toContain('not an ancestor of the head any more');
    expect(forced).toContain('+everything');
  });
});
