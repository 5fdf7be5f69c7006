/**
 * A small stateful GitHub REST API and GitLab v4 API on 127.0.0.1 speaking their wire
 * format: paths, pagination as each host writes it (GitHub: `Link` prev/next/last/first by
 * repository id; GitLab: `Link` on its external_url host plus `X-Next-Page` & co., notes
 * ordered by `order_by`/`sort`), comment/note bodies and ids,
 * PATCH/PUT edits, 404 for deleted comments, pull request files, contents (base64),
 * commits, check runs/statuses, compare, issues and search; merge request diffs,
 * pipelines and job traces; a pull/merge request's head when `pullHead`/`mrHead` is set;
 * compare and merge_base from a commit graph when `history` is set; a pull/merge
 * request's diff at an earlier head when `diffsAt` names it (GitHub compare from the base,
 * GitLab merge request versions), against which reviews and discussions naming that head
 * are checked. Tests script failures with `failNext`.
 */
import type { ServerResponse } from 'node:http';
import { sendJson, startLocalServer, type LocalServer, type Recorded } from './local-http';
import type { Config } from '../../functions/core/config/types';
import { compareCommits, mergeBase, type History } from './fake-history';

/** The user the fake's tokens act as (GET /user): comments it creates are this user's. */
/** A one-file patch for inline findings. Old 10..13 / new 10..14: context 10↔10, removed old 11, added new 11 and 12, context 12↔13 and 13↔14. */
export const SAMPLE_PATCH = '@@ -10,4 +10,5 @@ function f() {\n   const a = 1;\n-  const b = 2;\n+  const b = 3;\n+  const c = b / 0;\n   return a;\n }';

/** SAMPLE_PATCH after a second push: a second hunk at new lines 39..42 (an `eval` at 40). */
export const SAMPLE_PATCH_PUSHED = `${SAMPLE_PATCH}\n@@ -38,2 +39,4 @@ function g() {\n   let x = 0;\n+  x = eval(input);\n+  run(x);\n   return x;`;

/** The lines of `patch` a RIGHT comment may use (GitHub's rule, independent of hookagent's parser). */
export function rightLines(patch: string): Set<number> {
  const out = new Set<number>();
  let n = 0;
  for (const line of patch.split('\n')) {
    const h = /^@@ -\d+(?:,\d+)? \+(\d+)/.exec(line);
    if (h) n = Number(h[1]);
    else if (!line.startsWith('-')) out.add(n++);
  }
  return out;
}

export const FAKE_BOT = { id: 4242, login: 'hookagent-bot' };

/** The base commit of the fake's pull request (`GET …/pulls/{n}` `base.sha`) and of its merge request's diff_refs. */
export const FAKE_BASE_SHA = 'b'.repeat(40);
export const FAKE_START_SHA = 's'.repeat(40);

/** The pull/merge request's diff when its head was a commit: GitHub files and GitLab diffs. */
export interface FakeDiffAt { files: FakeCodehost['files']; mrDiffs: Array<Record<string, unknown>> }

export interface FakeComment {
  id: number; body: string; html_url: string; user?: { id: number; login: string; type: string }; author?: { id: number; username: string };
  /** GitLab notes: set by the fake when a note is posted or edited, or first listed (in list order) when a test added it without. */
  created_at?: string; updated_at?: string;
}

/** A comment or note written by the fake's bot user, as GitHub (`user`) or GitLab (`author`) lists it. */
export function botComment(id: number, body: string, host: 'github' | 'gitlab' = 'github'): FakeComment {
  return { id, body, html_url: `https://example.test/c${id}`, ...(host === 'github' ? { user: { ...FAKE_BOT, type: 'User' } } : { author: { id: FAKE_BOT.id, username: FAKE_BOT.login } }) };
}

export interface FakeCodehost {
  server: LocalServer;
  url: string;
  /** GitHub issue comments / GitLab notes by thread path ("/repos/o/r/issues/1", "/api/v4/projects/9/merge_requests/2"). */
  comments: Map<string, FakeComment[]>;
  /** GitHub pull request files; a renamed file has its new `filename` and its `previous_filename`. */
  files: Array<{ filename: string; status: string; additions: number; deletions: number; patch?: string; previous_filename?: string }>;
  contents: Map<string, string>;
  /** Answers given before normal handling, in order. */
  failNext: Array<[number, unknown, Record<string, string>?]>;
  /** GitHub pull request reviews posted (the request bodies). */
  reviews: Array<Record<string, any>>;
  /** GitHub review comments (GET …/pulls/{n}/comments) and GitLab discussions. */
  reviewComments: Array<{ path: string; line: number; side: string; body: string }>;
  discussions: Array<{ id: string; notes: Array<{ body: string; position: Record<string, unknown> }> }>;
  /** GitLab merge request diffs (GET …/merge_requests/{iid}/diffs) and its diff_refs. */
  mrDiffs: Array<Record<string, unknown>>;
  /** When set, GitHub `GET …/pulls/{n}` answers an open pull request with this head commit as JSON (else 404). */
  pullHead?: string;
  /** When set, GitLab `GET …/merge_requests/{iid}` names this head commit (`sha`, `diff_refs.head_sha`). */
  mrHead?: string;
  /** When set, the commit graph GitHub compare and GitLab merge_base answer from (fake-history.ts). */
  history?: History;
  /** Earlier heads of the pull/merge request and its diff at each (GitHub `compare/{FAKE_BASE_SHA}...{sha}`, GitLab `…/versions`). */
  diffsAt: Map<string, FakeDiffAt>;
  /** Extra handler tried first; return true when it answered. */
  extra?: (req: Recorded, res: ServerResponse, url: URL) => boolean;
  /** Forgets what earlier tests posted and queued (comments, reviews, discussions, failures, requests, `extra`). */
  reset(): void;
  close(): Promise<void>;
}

/** The id GitHub's `Link` headers name the repository by. */
export const FAKE_REPOSITORY_ID = 1300192;

/**
 * The host GitLab writes its pagination links with: its own configured external_url, not
 * the address it was asked at (`Gitlab::Pagination::OffsetHeaderBuilder#base_request_uri`
 * sets `Gitlab.config.gitlab.host`/`.port`), as for a self-managed GitLab that hookagent
 * reaches at an internal address. Nothing listens there.
 */
export const FAKE_GITLAB_EXTERNAL_URL = 'https://gitlab.example.com';

/** One page of `items` as `?page=&per_page=` ask (defaults: GitHub 30, GitLab 20; at most 100). */
function page<T>(res: ServerResponse, url: URL, items: T[]): void {
  const gitlab = url.pathname.startsWith('/api/v4/');
  const perPage = Math.min(100, Number(url.searchParams.get('per_page') ?? (gitlab ? '20' : '30')));
  const current = Math.max(1, Number(url.searchParams.get('page') ?? '1'));
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const slice = items.slice((current - 1) * perPage, current * perPage);
  const href = (n: number) => {
    const link = gitlab ? new URL(`${url.pathname}${url.search}`, FAKE_GITLAB_EXTERNAL_URL) : new URL(url);
    link.searchParams.set('page', String(n));
    if (gitlab) link.searchParams.set('per_page', String(perPage));
    // As api.github.com writes it: the repository by id (its pagination guide's example,
    // `/repositories/1300192/issues?page=4`), not /repos/{owner}/{repo}.
    else link.pathname = link.pathname.replace(/^\/repos\/[^/]+\/[^/]+\//, `/repositories/${FAKE_REPOSITORY_ID}/`);
    return `<${link.href}>`;
  };
  const prev = current > 1 ? [`${href(current - 1)}; rel="prev"`] : [];
  const next = current < last ? [`${href(current + 1)}; rel="next"`] : [];
  if (!gitlab) {
    // GitHub: no Link on a single page; "first" and "prev" only after page 1, "next" and "last" only before the last.
    const links = [...prev, ...next, ...(current < last ? [`${href(last)}; rel="last"`] : []), ...(current > 1 ? [`${href(1)}; rel="first"`] : [])];
    return sendJson(res, 200, slice, links.length > 0 ? { link: links.join(', ') } : {});
  }
  // GitLab (OffsetHeaderBuilder): prev, next, first, last, and the X- headers, empty where there is no such page.
  sendJson(res, 200, slice, {
    link: [...prev, ...next, `${href(1)}; rel="first"`, `${href(last)}; rel="last"`].join(', '),
    'x-page': String(current), 'x-per-page': String(perPage), 'x-next-page': current < last ? String(current + 1) : '', 'x-prev-page': current > 1 ? String(current - 1) : '',
    'x-total': String(items.length), 'x-total-pages': String(last),
  });
}

let clock = Date.parse('2024-01-01T00:00:00Z');
const tick = () => new Date((clock += 1000)).toISOString();

/** GitLab's notes order: `order_by` created_at (its default) or updated_at, `sort` desc (its default) or asc. */
function gitlabNotes(list: FakeComment[], url: URL): FakeComment[] {
  const key = url.searchParams.get('order_by') === 'updated_at' ? 'updated_at' : 'created_at';
  const sign = url.searchParams.get('sort') === 'asc' ? 1 : -1;
  return list.map((note, at) => ({ note, at })).sort((a, b) => sign * (a.note[key]!.localeCompare(b.note[key]!) || a.at - b.at)).map(({ note }) => note);
}

export async function startFakeCodehost(): Promise<FakeCodehost> {
  let nextId = 1000;
  const state = { comments: new Map<string, FakeComment[]>(), files: [], contents: new Map(), failNext: [], reviews: [], reviewComments: [], discussions: [], mrDiffs: [], diffsAt: new Map() } as unknown as FakeCodehost;
  state.reset = () => {
    state.comments.clear();
    state.reviews.length = 0;
    state.reviewComments.length = 0;
    state.discussions.length = 0;
    state.failNext.length = 0;
    state.diffsAt.clear();
    state.server.requests.length = 0;
    delete state.extra;
    delete state.pullHead;
    delete state.mrHead;
    delete state.history;
  };
  state.server = await startLocalServer((req, res) => {
    const url = new URL(req.url, state.server.url);
    if (state.extra?.(req, res, url)) return;
    const failure = state.failNext.shift();
    if (failure) return sendJson(res, failure[0], failure[1], failure[2]);
    const path = url.pathname;
    let m: RegExpExecArray | null;
    if (path === '/user') return sendJson(res, 200, { ...FAKE_BOT, type: 'User' });
    if (path === '/api/v4/user') return sendJson(res, 200, { id: FAKE_BOT.id, username: FAKE_BOT.login });
    // Comments and notes.
    if ((m = /^(\/repos\/[^/]+\/[^/]+\/issues\/\d+)\/comments$/.exec(path)) || (m = /^(\/api\/v4\/projects\/[^/]+\/(?:merge_requests|issues)\/\d+)\/notes$/.exec(path))) {
      const thread = m[1]!;
      const gitlab = thread.startsWith('/api/v4/');
      const list = state.comments.get(thread) ?? [];
      // A note a test added without times was made before anything the fake does next.
      if (gitlab) for (const note of list) if (!note.created_at) note.created_at = note.updated_at = tick();
      if (req.method === 'GET') return page(res, url, gitlab ? gitlabNotes(list, url) : list);
      const body = JSON.parse(req.body) as { body: string };
      const comment: FakeComment = { ...botComment(++nextId, body.body, gitlab ? 'gitlab' : 'github'), html_url: `https://example.test${thread}#note-${nextId}` };
      if (gitlab) comment.created_at = comment.updated_at = tick();
      state.comments.set(thread, [...list, comment]);
      return sendJson(res, 201, comment);
    }
    if ((m = /^\/repos\/[^/]+\/[^/]+\/issues\/comments\/(\d+)$/.exec(path)) || (m = /^\/api\/v4\/projects\/[^/]+\/(?:merge_requests|issues)\/\d+\/notes\/(\d+)$/.exec(path))) {
      const id = Number(m[1]);
      for (const list of state.comments.values()) {
        const found = list.find((c) => c.id === id);
        if (found && (req.method === 'PATCH' || req.method === 'PUT')) {
          found.body = (JSON.parse(req.body) as { body: string }).body;
          if (req.method === 'PUT') found.updated_at = tick();
          return sendJson(res, 200, found);
        }
      }
      return sendJson(res, 404, { message: 'Not Found' });
    }
    // JSON only: the whole diff (accept: application/vnd.github.diff) stays unanswered (404), so readers take the files.
    if ((m = /^\/repos\/[^/]+\/[^/]+\/pulls\/(\d+)$/.exec(path)) && req.method === 'GET' && state.pullHead && !String(req.headers.accept).includes('diff')) return sendJson(res, 200, { number: Number(m[1]), state: 'open', head: { sha: state.pullHead }, base: { sha: FAKE_BASE_SHA } });
    if (/^\/repos\/[^/]+\/[^/]+\/pulls\/\d+\/files$/.test(path)) return page(res, url, state.files);
    if (/^\/repos\/[^/]+\/[^/]+\/pulls\/\d+\/comments$/.test(path)) return page(res, url, state.reviewComments);
    if (/^\/repos\/[^/]+\/[^/]+\/pulls\/\d+\/reviews$/.test(path) && req.method === 'POST') {
      const review = JSON.parse(req.body) as { event?: string; commit_id?: string; comments?: Array<{ path: string; line: number; side: string; body: string }> };
      // GitHub refuses the whole review when one comment is not on a line of its commit_id's diff.
      const files = (review.commit_id ? state.diffsAt.get(review.commit_id)?.files : undefined) ?? state.files;
      for (const c of review.comments ?? []) {
        const file = files.find((f) => f.filename === c.path);
        if (!file || !diffLines(file.patch ?? '', c.side).has(c.line)) return sendJson(res, 422, { message: 'Unprocessable Entity', errors: ['Line could not be resolved'] });
      }
      state.reviews.push(review);
      const made = review.commit_id ? { commit_id: review.commit_id, original_commit_id: review.commit_id } : {};
      state.reviewComments.push(...(review.comments ?? []).map((c) => ({ ...c, ...made, ...(review.commit_id ? { original_line: c.line } : {}), user: { ...FAKE_BOT, type: 'User' } })));
      return sendJson(res, 200, { id: state.reviews.length, state: 'COMMENTED' });
    }
    if (/^\/api\/v4\/projects\/[^/]+\/merge_requests\/\d+$/.test(path)) return sendJson(res, 200, { iid: 1, ...(state.mrHead ? { sha: state.mrHead } : {}), diff_refs: { base_sha: FAKE_BASE_SHA, start_sha: FAKE_START_SHA, head_sha: state.mrHead ?? 'h'.repeat(40) } });
    if ((m = /^\/repos\/[^/]+\/[^/]+\/compare\/([^/.]+)\.\.\.([^/.]+)$/.exec(path)) && m[1] === FAKE_BASE_SHA && state.diffsAt.has(m[2]!)) return sendJson(res, 200, { status: 'ahead', files: state.diffsAt.get(m[2]!)!.files });
    if ((m = /^\/api\/v4\/projects\/[^/]+\/merge_requests\/\d+\/versions(?:\/(\d+))?$/.exec(path))) {
      // Newest first: the head now, then the earlier heads, newest added last.
      const versions = [...(state.mrHead ? [[state.mrHead, state.mrDiffs] as const] : []), ...[...state.diffsAt].reverse().map(([sha, at]) => [sha, at.mrDiffs] as const)]
        .map(([sha, diffs], i) => ({ id: 500 - i, head_commit_sha: sha, base_commit_sha: FAKE_BASE_SHA, start_commit_sha: FAKE_START_SHA, state: 'collected', diffs }));
      if (m[1] === undefined) return page(res, url, versions.map(({ diffs: _diffs, ...listed }) => listed));
      const version = versions.find((v) => v.id === Number(m![1]));
      return version ? sendJson(res, 200, version) : sendJson(res, 404, { message: '404 Not found' });
    }
    if ((m = /^\/repos\/[^/]+\/[^/]+\/compare\/([^/.]+)\.\.\.([^/.]+)$/.exec(path)) && state.history) return sendJson(res, ...compareCommits(state.history, m[1]!, m[2]!));
    if (/^\/api\/v4\/projects\/[^/]+\/repository\/merge_base$/.test(path) && state.history) return sendJson(res, ...mergeBase(state.history, url.searchParams.getAll('refs[]')));
    if (/^\/api\/v4\/projects\/[^/]+\/merge_requests\/\d+\/diffs$/.test(path)) return page(res, url, state.mrDiffs);
    if (/^\/api\/v4\/projects\/[^/]+\/merge_requests\/\d+\/discussions$/.test(path)) {
      if (req.method === 'GET') return page(res, url, state.discussions);
      const posted = JSON.parse(req.body) as { body: string; position: Record<string, unknown> };
      const diffs = state.diffsAt.get(String(posted.position.head_sha))?.mrDiffs ?? state.mrDiffs;
      const diff = diffs.find((d) => d.new_path === posted.position.new_path);
      const side = posted.position.new_line !== undefined ? 'RIGHT' : 'LEFT';
      const line = Number(posted.position.new_line ?? posted.position.old_line);
      // A renamed file is found by both its paths: a position with the wrong old_path has no line code.
      const wrongOldPath = diff?.renamed_file === true && typeof diff.old_path === 'string' && posted.position.old_path !== diff.old_path;
      if (!diff || wrongOldPath || !diffLines(String(diff.diff), side).has(line)) return sendJson(res, 400, { message: '400 Bad request - Note {:line_code=>["can\'t be blank", "must be a valid line code"]}' });
      const discussion = { id: `d${state.discussions.length + 1}`, notes: [{ body: posted.body, position: posted.position, author: { id: FAKE_BOT.id, username: FAKE_BOT.login } }] };
      state.discussions.push(discussion);
      return sendJson(res, 201, discussion);
    }
    if ((m = /^\/repos\/[^/]+\/[^/]+\/contents\/(.+)$/.exec(path))) {
      const text = state.contents.get(`${decodeURIComponent(m[1]!)}@${url.searchParams.get('ref') ?? ''}`);
      return text === undefined ? sendJson(res, 404, { message: 'Not Found' }) : sendJson(res, 200, { type: 'file', encoding: 'base64', content: Buffer.from(text).toString('base64') });
    }
    sendJson(res, 404, { message: 'Not Found' });
  });
  state.url = state.server.url;
  state.close = () => state.server.close();
  return state;
}

/** Lines of a patch a comment may point at, independently of hookagent's own parser. */
function diffLines(patch: string, side: string): Set<number> {
  const out = new Set<number>();
  let o = 0;
  let n = 0;
  for (const line of patch.split('\n')) {
    const h = /^@@ -(\d+)(?:,\d+)? \+(\d+)/.exec(line);
    if (h) {
      o = Number(h[1]);
      n = Number(h[2]);
    } else if (line.startsWith('+')) {
      if (side === 'RIGHT') out.add(n);
      n++;
    } else if (line.startsWith('-')) {
      if (side === 'LEFT') out.add(o);
      o++;
    } else {
      out.add(side === 'RIGHT' ? n : o);
      n++;
      o++;
    }
  }
  return out;
}

/**
 * One fake code host for a test file: started before its tests, closed after them, reset
 * before each (register further per-test setup after this call). `bind` receives it.
 */
export function useFakeCodehost(bind: (host: FakeCodehost) => void, options: { samplePatch?: boolean } = {}): void {
  let host: FakeCodehost | undefined;
  beforeAll(async () => {
    host = await startFakeCodehost();
    bind(host);
  });
  afterAll(async () => host?.close());
  beforeEach(() => {
    host?.reset();
    // One modified file, `src/f.ts` with SAMPLE_PATCH, on both hosts: what most review tests place findings on.
    if (host && options.samplePatch) {
      host.files = [{ filename: 'src/f.ts', status: 'modified', additions: 2, deletions: 1, patch: SAMPLE_PATCH }];
      host.mrDiffs = [{ old_path: 'src/f.ts', new_path: 'src/f.ts', diff: `${SAMPLE_PATCH}\n`, new_file: false, renamed_file: false, deleted_file: false }];
    }
  });
}

/** The `delivery` settings of a test that posts to `host` as both GitHub and GitLab. */
export function codehostDelivery(host: FakeCodehost, timeoutMs: number, tokens: { github: string; gitlab: string } = { github: 'gh-T', gitlab: 'gl-T' }): Config['delivery'] {
  return { timeout_ms: timeoutMs, codehost: { github: { token: tokens.github, api_url: host.url }, gitlab: { token: tokens.gitlab, api_url: `${host.url}/api/v4` } } };
}
