/**
 * What every code-host tool shares: the subject of the event (the one validated locator,
 * `events/subject.ts`), a client that keeps requests under the repository/project on the
 * `api_url` origin (`delivery/codehost-api.ts`; GitHub through octokit), answers read as
 * JSON, output caps that say when and where they cut, and the head a run's diffs are of
 * (diffHead, changedFiles): kept for the whole run, also after a push.
 */
import { HookError } from '../../errors';
import { subjectOf, type Subject } from '../../events/subject';
import { codehostClient, isFailure, type CodehostClient, type ScopedClient } from '../../delivery/codehost-api';
import { installationIdOf } from '../../delivery/github-app';
import { pause, type HttpResult } from '../../delivery/http';
import { unpreparedMessage, whenPrepared } from '../../delivery/gitlab-prepared';
import { readChange } from '../../delivery/live-change';
import { diffAt } from '../../delivery/past-diff';
import type { RunReads, ToolContext } from '../tools';
import { cutText } from '../../cut-text';

/** Tools wait out rate limits in-process up to this long (a GitHub secondary limit asks for 60 s), or until the run's time runs out. */
export const TOOL_MAX_WAIT_MS = 90_000;
/** Each tool request's own time limit (the agent's `agent.timeout` bounds the whole run). */
export const TOOL_REQUEST_TIMEOUT_MS = 30_000;

export interface Opened {
  client: ScopedClient;
  subject: Subject;
  /** The pull/merge request or issue number. */
  number: number;
  /** A wait of the run (the test's sleep; over when the run's time runs out), and whether that time ran out. */
  pause: (ms: number) => Promise<void>;
  aborted: () => boolean;
  /** What the run's tools read (one per run; absent outside a run): the head its diffs are of. */
  reads?: RunReads;
}

export function subjectOfContext(context: ToolContext): Subject {
  return subjectOf(context.message.source, context.message.event, context.payload, context.message.event_id);
}

export function clientFor(context: ToolContext, subject: Subject): ScopedClient {
  const client = codehostClient(subject, context.delivery.codehost, {
    // The run's signal: agent.timeout aborts the request in flight and ends any rate-limit wait.
    timeoutMs: TOOL_REQUEST_TIMEOUT_MS, maxWaitMs: context.maxWaitMs ?? TOOL_MAX_WAIT_MS, signal: context.signal, ...(context.sleep ? { sleep: context.sleep } : {}), ...(context.logger ? { logger: context.logger } : {}),
  }, { ...(installationIdOf(context.payload) === undefined ? {} : { installationId: installationIdOf(context.payload) as number }) });
  if (isFailure(client)) throw new HookError(`tool_${client.failure.code}`, client.failure.message);
  return client;
}

/** The pull/merge request (or, with `issues: true`, the issue too) this event is about. */
export function openSubject(context: ToolContext, want: 'change' | 'issue' | 'any'): Opened {
  const subject = subjectOfContext(context);
  const isChange = subject.kind === 'pull_request' || subject.kind === 'merge_request';
  const ok = want === 'any' ? isChange || subject.kind === 'issue' : want === 'change' ? isChange : subject.kind === 'issue' || isChange;
  if (!ok || subject.number === undefined) {
    throw new HookError('tool_no_change', want === 'change' ? 'This event names no pull request or merge request' : 'This event names no issue, pull request or merge request');
  }
  return {
    client: clientFor(context, subject), subject, number: subject.number,
    pause: (ms) => pause(ms, context.sleep, context.signal), aborted: () => context.signal.aborted,
    ...(context.reads ? { reads: context.reads } : {}),
  };
}

/** The API path of the change: GitHub `/pulls/{n}`, GitLab `/merge_requests/{iid}`. */
export function changePath(opened: Opened): string {
  return opened.client.host === 'github' ? `/pulls/${opened.number}` : `/merge_requests/${opened.number}`;
}

export function issuePath(opened: Opened): string {
  if (opened.client.host === 'github') return `/issues/${opened.number}`;
  return opened.subject.kind === 'merge_request' ? `/merge_requests/${opened.number}` : `/issues/${opened.number}`;
}

export function answerText(answer: HttpResult): string {
  if (!answer.ok) throw toolError(answer.failure);
  return answer.body;
}

export function answerJson<T>(answer: HttpResult): T {
  const text = answerText(answer);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new HookError('tool_bad_answer', 'The code host answered with something that is not JSON');
  }
}

export async function getJson<T>(opened: { client: CodehostClient }, path: string): Promise<T> {
  return answerJson<T>(await opened.client.request(path));
}

export async function listAll<T>(opened: { client: CodehostClient }, path: string, max: number): Promise<{ items: T[]; note: string }> {
  const page = await opened.client.paginate<T>(path, max);
  if (!page.ok) throw toolError(page.failure);
  return { items: page.items, note: page.truncated ? `\n…[list cut: ${page.truncated}]` : '' };
}

/** Cuts `text` to `limit` characters, saying what was cut and how to read the rest. */
export function capText(text: string, limit: number, hint: string): string {
  if (text.length <= limit) return text;
  return `${cutText(text, limit)}\n…[cut at ${limit} of ${text.length} characters; ${hint}]`;
}

/** A repository file path: relative, no empty, `.` or `..` segments, no control characters. */
export function safeFilePath(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 1024) throw new HookError('tool_bad_input', 'path must be a repository file path');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\\]/.test(value) || value.startsWith('/') || value.split('/').some((s) => s === '' || s === '.' || s === '..')) {
    throw new HookError('tool_bad_input', `path '${value.replace(/[^\x20-\x7e]/g, '?').slice(0, 200)}' is not a plain relative repository path`);
  }
  return value;
}

/** A git ref: a commit id, branch or tag name (git's rules, simplified). */
export function safeRef(value: unknown): string {
  if (typeof value !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$/.test(value) || value.includes('..') || value.includes('//') || value.endsWith('/') || value.endsWith('.lock')) {
    throw new HookError('tool_bad_input', 'ref must be a commit id, branch or tag name');
  }
  return value;
}

export const obj = (v: unknown): Record<string, unknown> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
export const s = (v: unknown): string => (typeof v === 'string' ? v : v === null || v === undefined ? '' : String(v));

export function inputOf(input: unknown): Record<string, unknown> {
  return obj(input) ?? {};
}

export function positiveLine(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw new HookError('tool_bad_input', `${name} must be a positive line number`);
  return value;
}

export interface FileChange { path: string; status: string; additions?: number; deletions?: number; patch?: string; previous?: string }

/** A GitHub file entry (`/pulls/{n}/files`, `/compare`) as a changed file. */
export function githubFile(f: Record<string, unknown>): FileChange {
  return { path: s(f.filename), status: s(f.status), additions: Number(f.additions), deletions: Number(f.deletions), ...(typeof f.patch === 'string' ? { patch: f.patch } : {}), ...(f.previous_filename ? { previous: s(f.previous_filename) } : {}) };
}

/** GitHub lists at most 3,000 files of a pull request; GitLab's diffs API is paginated likewise. */
export const MAX_FILES = 3000;

export interface Listing { files: FileChange[]; note: string }

/**
 * The change's own files and diffs (base...head, as its page shows them) now. An empty GitLab
 * list is only taken once the merge request says it is prepared (delivery/gitlab-prepared.ts):
 * a few seconds are waited for it, then the read fails retryably.
 */
export async function liveFiles(opened: Opened): Promise<Listing> {
  if (opened.client.host === 'github') {
    const { items, note } = await listAll<Record<string, unknown>>(opened, `${changePath(opened)}/files`, MAX_FILES);
    return { note, files: items.map(githubFile) };
  }
  const read = () => listAll<Record<string, unknown>>(opened, `${changePath(opened)}/diffs`, MAX_FILES);
  const listed = await whenPrepared(opened.client, changePath(opened), read, (list) => (list.items.length === 0 ? 0 : undefined), opened.pause, opened.aborted);
  if (listed.failure) throw toolError(listed.failure);
  if (listed.unprepared) throw new HookError('tool_unprepared', `${unpreparedMessage(listed.unprepared)}; the diff cannot be read now`, { retryable: true });
  return { note: listed.value.note, files: listed.value.items.map(gitlabFile) };
}

/** A GitLab diff entry (`/merge_requests/:iid/diffs`, `/repository/compare`) as a changed file. */
export function gitlabFile(d: Record<string, unknown>): FileChange {
  const status = d.new_file ? 'added' : d.deleted_file ? 'removed' : d.renamed_file ? 'renamed' : 'modified';
  // GitLab leaves the text out of a too_large or collapsed file (`diff: ""`): that is no diff, not an empty one.
  const left = d.diff === '' && (d.too_large === true || d.collapsed === true);
  return { path: s(d.new_path), status, ...(typeof d.diff === 'string' && !left ? { patch: d.diff } : {}), ...(d.renamed_file ? { previous: s(d.old_path) } : {}) };
}

/** A failed request as the tool's error: "github answered 404: Not Found", not delivery wording. */
export function toolError(failure: { code: string; message: string; retryable: boolean; retryAfterMs?: number }): HookError {
  const message = failure.message.replace(/^(GitHub|GitLab) refused the delivery \((\d+)\): /, (_m, host: string, status: string) => `${host.toLowerCase()} answered ${status}: `);
  return new HookError(`tool_${failure.code}`, message, { retryable: failure.retryable, ...(failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs }) });
}

/** The change's head as the host shows it now. */
async function headOf(opened: Opened): Promise<string> {
  const c = await getJson<Record<string, unknown>>(opened, changePath(opened));
  const head = opened.client.host === 'github' ? s(obj(c.head)?.sha) : s(obj(c.diff_refs)?.head_sha ?? c.sha);
  return safeRef(head);
}

/**
 * The head the run's tools read: the event's commit, or, for an event that names none (a
 * comment asking for a review), the head as first read in this run, kept for the rest of it
 * so that get_file, get_ci_status and the diffs agree when a push lands during the run. A
 * failed read is not kept (the next call asks again).
 */
export function headRead(opened: Opened): Promise<string> {
  if (opened.subject.commit) return Promise.resolve(opened.subject.commit);
  const reads = opened.reads;
  if (!reads) return headOf(opened);
  const read = (reads.head ??= headOf(opened).catch((error: unknown) => {
    if (reads.head === read) delete reads.head;
    throw error;
  }));
  return read;
}

/**
 * The head the run's diffs are of, kept for the run in `reads.head` (the sticky footer names
 * it, findings are placed on it): headRead's for an event that names no commit; for one that
 * names a commit, the head the host shows at the first diff read (a push before the run is
 * reviewed in it), else the event's commit. Undefined when no head can be told.
 */
export async function diffHead(opened: Opened): Promise<string | undefined> {
  if (opened.reads?.head || !opened.subject.commit) return (opened.reads?.head ?? headRead(opened)).catch(() => undefined);
  const head = (await readChange(opened.client, opened.subject)).head ?? opened.subject.commit;
  if (opened.reads) opened.reads.head ??= Promise.resolve(head);
  return head;
}

/** After a live read: the head now, when it is not `pinned` (a push since); none when it is, or cannot be told. */
async function movedFrom(opened: Opened, pinned: string | undefined): Promise<{ head: string; base?: string } | undefined> {
  const now = await readChange(opened.client, opened.subject);
  return now.head && pinned !== undefined && now.head !== pinned ? { head: now.head, ...(now.base ? { base: now.base } : {}) } : undefined;
}

/**
 * The change's files and diffs at the head the run's diffs are of (diffHead): the live list
 * when the host still shows that head after it was read; after a push, that head's own diff
 * (delivery/past-diff.ts), so every line number the model reads is the one delivery places
 * its findings on. When that cannot be read the call fails: numbers of another diff would
 * put findings on other code.
 */
export async function changedFiles(opened: Opened): Promise<Listing> {
  const pinned = await diffHead(opened);
  const live = await liveFiles(opened);
  const moved = await movedFrom(opened, pinned);
  return moved && pinned ? pastFiles(opened, pinned, moved) : live;
}

/** A diff read whole (GitHub's one request): kept when it is of the run's head (else undefined: read it file by file). */
export async function wholeAtPin(opened: Opened, read: () => Promise<HttpResult>): Promise<string | undefined> {
  const pinned = await diffHead(opened);
  const whole = await read();
  return whole.ok && !(await movedFrom(opened, pinned)) ? whole.body : undefined;
}

async function pastFiles(opened: Opened, pinned: string, now: { head: string; base?: string }): Promise<Listing> {
  const moved = `the change moved on from ${pinned.slice(0, 12)}, the head this review reads, to ${now.head.slice(0, 12)}`;
  const past = await diffAt(opened.client, changePath(opened), pinned, now.base);
  if (!past.ok) throw new HookError('tool_moved_on', `${moved}, and ${pinned.slice(0, 12)}'s diff cannot be read (${past.why}); its line numbers would not be those of the review`);
  const files = past.diff.files.map(opened.client.host === 'github' ? githubFile : gitlabFile);
  const cut = past.diff.cut ? `; ${past.diff.cut}, so files may be missing here: list_changed_files lists the files now` : '';
  return { files, note: `\n…[${moved}: this is the diff at ${pinned.slice(0, 12)}, the one findings are placed on${cut}]` };
}
