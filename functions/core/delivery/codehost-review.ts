/**
 * Inline findings on the diff: GitHub gets ONE pull request review (`event: COMMENT`)
 * with a comment per finding on a diff line; GitLab gets a discussion per finding with a
 * position (`base_sha`, `start_sha`, `head_sha`, paths, `new_line`/`old_line`). Lines are
 * checked against the live diff first, and posted against the head that diff is of
 * (live-change.ts; the head is read again after the diff, and the diff again if it moved).
 * Findings outside it, positions the host rejects, and any failure here are folded into
 * the summary comment instead, so this step does not fail the delivery; the one exception
 * is a GitLab merge request not prepared yet (gitlab-prepared.ts): that delivery fails
 * retryably after a short wait, as its findings will have a diff soon. A review GitHub
 * refuses (422, which names no comment) is sent again in halves, so only the refused
 * comments are folded. Failed writes are tried again after a look for their markers, rate
 * limits waited out (inline-send.ts). One thread per place: while a finding comment of the
 * subscription stands on a place of the live diff (not outdated, resolved or not), a finding
 * there is not posted again, however it is worded (heldPlaces).
 */
import { HookError } from '../errors';
import type { Subject } from '../events/subject';
import { isFailure, type CodehostClient, type Page, type ScopedClient } from './codehost-api';
import { commentableLines, findingBody, findingMarker, findingPlace, postedFindings, FINDING_MARKER_HEAD, type DiffLines, type Finding } from './findings';
import { unpreparedMessage, whenPrepared } from './gitlab-prepared';
import { realSleep } from './http';
import { inlinePacing, sendInline, sendInParts } from './inline-send';
import { changePathOf, type LiveChange, type LiveChangeReader } from './live-change';

export interface InlineResult {
  posted: number;
  skipped: number;
  /** Findings for the summary, with why they are there. */
  folded: Array<{ finding: Finding; why: string }>;
}

export interface InlineOptions {
  /** The change as the host shows it now, read once per delivery (live-change.ts). */
  live: LiveChangeReader;
  /** The delivery's sleep and in-place rate-limit maximum (HttpOptions). */
  sleep?: (ms: number) => Promise<void>;
  maxWaitMs?: number;
}

type Obj = Record<string, unknown>;
/** A listed comment and its text. */
type Listed = [unknown, string];

/** The listed review comments (GitHub) or discussion notes (GitLab), each with its text; none when the list cannot be read. */
async function listInline(client: ScopedClient, change: string): Promise<Listed[]> {
  // GitHub lists review comments oldest first and cannot sort them: read from the last page
  // back, so the findings of the latest reviews are among the 3,000 read on a long pull request.
  const listed = client.host === 'github'
    ? await client.readList<Obj>(`${change}/comments`, 3000, { fromLast: true })
    : await client.paginate<Obj>(`${change}/discussions`, 3000);
  if (!listed.ok) return [];
  // GitHub review comments carry the body; GitLab discussions their notes, each with its author.
  return listed.items.flatMap((item): Listed[] => client.host === 'github'
    ? [[item, str(item.body)]]
    : (Array.isArray(item.notes) ? item.notes : []).map((n): Listed => [n, str((n as Obj).body)]));
}

/** The comments with finding markers that hookagent wrote itself (own-comments.ts); none when that cannot be told. */
async function ownFindingComments(client: CodehostClient, comments: Listed[]): Promise<Listed[]> {
  const marked = comments.filter(([, body]) => body.includes(FINDING_MARKER_HEAD));
  if (marked.length === 0) return [];
  const own = await client.ownComments();
  return isFailure(own) ? [] : marked.filter(([comment]) => own(comment));
}

/**
 * The places (findingPlace) the subscription's own finding comments hold, each where the
 * host shows it now: a push that leaves its line unchanged moves it with its code (GitHub
 * its `line`; GitLab its position's new_line/old_line, the marker's side). The marker's
 * place stands for what the host does not say.
 */
async function heldPlaces(client: CodehostClient, comments: Listed[], subscription: string): Promise<Set<string>> {
  const held = new Set<string>();
  for (const [comment, body] of await ownFindingComments(client, comments)) {
    const c = (comment ?? {}) as Obj;
    const position = c.position && typeof c.position === 'object' ? (c.position as Obj) : {};
    for (const p of postedFindings(body)) {
      if (p.subscription !== subscription) continue;
      const path = [c.path, position.new_path].find((v): v is string => typeof v === 'string') ?? p.path;
      const line = [c.line, position[p.side === 'RIGHT' ? 'new_line' : 'old_line']].find((v): v is number => typeof v === 'number') ?? p.line;
      held.add(findingPlace(subscription, { side: p.side, path, line }));
    }
  }
  return held;
}

/**
 * A comment whose line changed since no longer holds its place. GitHub marks it (`line: null`).
 * GitLab sends no `line`: it moves a diff note's position forward to the new diff_refs when
 * its line is unchanged, and leaves it at the old version's otherwise, so a note counts only
 * when its position is of the live diff.
 */
function outdated(comment: unknown, live: LiveChange): boolean {
  const c = comment as Obj | null;
  if (c?.line === null) return true;
  const position = c?.position as Obj | null | undefined;
  if (!position || typeof position !== 'object' || !live.refs) return false;
  // A position naming no diff version (none GitLab writes) says nothing either way.
  const of = (key: 'head_sha' | 'start_sha') => typeof position[key] === 'string' && position[key] !== live.refs?.[key];
  return of('head_sha') || of('start_sha');
}

/** After a failed try: whether a comment carrying one of these findings' markers is there now (made before the answer was lost). */
function landedAny(client: ScopedClient, change: string, subscription: string, findings: Finding[]): () => Promise<boolean> {
  return async () => {
    // By the hash: an older comment on the same place is no sign that this write was made.
    const mine = await ownFindingComments(client, await listInline(client, change));
    const keys = new Set(mine.flatMap(([, body]) => postedFindings(body).flatMap((p) => p.key ?? [])));
    return findings.some((f) => keys.has(findingMarker(subscription, f)));
  };
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

export async function postInlineFindings(client: ScopedClient, subject: Subject, subscription: string, marker: string, findings: Finding[], options: InlineOptions): Promise<InlineResult> {
  const result: InlineResult = { posted: 0, skipped: 0, folded: [] };
  const foldAll = (list: Finding[], why: string) => result.folded.push(...list.map((finding) => ({ finding, why })));
  if (findings.length === 0) return result;
  const change = changePathOf(client, subject);
  if (!change) {
    foldAll(findings, 'not a pull/merge request');
    return result;
  }
  const { live, files } = await preparedDiff(client, subject, change, options);
  if (!files.ok) {
    foldAll(findings, `the diff could not be read (${files.failure.code})`);
    return result;
  }
  const diff = new Map<string, DiffLines>();
  const oldPaths = new Map<string, string>();
  /** A renamed file's old name → its new name (how both hosts key the file). */
  const renamedFrom = new Map<string, string>();
  for (const f of files.items) {
    const path = client.host === 'github' ? str(f.filename) : str(f.new_path);
    const old = (client.host === 'github' ? str(f.previous_filename) : str(f.old_path)) || path;
    diff.set(path, commentableLines(client.host === 'github' ? str(f.patch) : str(f.diff)));
    oldPaths.set(path, old);
    if (old !== path) renamedFrom.set(old, path);
  }
  const held = await heldPlaces(client, (await listInline(client, change)).filter(([comment]) => !outdated(comment, live)), subscription);
  const inline: Finding[] = [];
  for (const found of findings) {
    // A finding on a renamed file may name it by its old path (natural for a removed line):
    // both hosts place it by the new path (GitLab also gets old_path below).
    const renamed = diff.has(found.path) ? undefined : renamedFrom.get(found.path);
    const f = renamed === undefined ? found : { ...found, path: renamed };
    const lines = diff.get(f.path);
    if (lines && lines.RIGHT.size === 0 && lines.LEFT.size === 0) result.folded.push({ finding: f, why: 'the host shows no diff lines for this file: binary, too large, or only renamed' });
    else if (!lines || !lines[f.side].has(f.line)) result.folded.push({ finding: f, why: 'outside the diff' });
    else if (held.has(findingPlace(subscription, f))) result.skipped++;
    else inline.push(f);
  }
  if (inline.length === 0) return result;
  const pacing = inlinePacing(options.sleep, options.maxWaitMs);

  if (client.host === 'github') {
    // Without a head read now, no commit_id: GitHub then takes the pull request's latest commit, whose diff was just read.
    const review = (part: Finding[]) => ({
      ...(live.head ? { commit_id: live.head } : {}), event: 'COMMENT',
      body: `hookagent: ${part.length} finding(s) on changed lines.\n\n${marker}`,
      comments: part.map((f) => ({ path: f.path, line: f.line, side: f.side, body: findingBody(subscription, f) })),
    });
    // A review is all or nothing: any of its markers found means it was made. A refused one is sent again in halves.
    const sent = await sendInParts(inline, (part) =>
      sendInline(pacing, () => client.request(`${change}/reviews`, { method: 'POST', attempts: 1, body: review(part) }), landedAny(client, change, subscription, part)));
    result.posted = sent.posted.length;
    for (const { items, why } of sent.failed) foldAll(items, `GitHub did not take the inline review (${why})`);
    return result;
  }

  if (!live.refs) {
    foldAll(inline, 'the merge request\'s diff_refs could not be read');
    return result;
  }
  for (const f of inline) {
    const position = gitlabPosition(live.refs, oldPaths.get(f.path) ?? f.path, f, diff.get(f.path)!);
    const post = () => client.request(`${change}/discussions`, { method: 'POST', attempts: 1, body: { body: findingBody(subscription, f), position } });
    const sent = await sendInline(pacing, post, landedAny(client, change, subscription, [f]));
    if (sent.ok) result.posted++;
    else result.folded.push({ finding: f, why: `GitLab did not take the position (${sent.why})` });
  }
  return result;
}

/** How many times the diff is read while the head keeps moving under it. */
const DIFF_READS = 3;

const sameChange = (a: LiveChange, b: LiveChange) => a.head === b.head && a.refs?.base_sha === b.refs?.base_sha && a.refs?.start_sha === b.refs?.start_sha;

/**
 * The diff and the head it is of. The head is read before the diff and again after it: a
 * push in between may have given the newer head's diff, so then the diff is read again.
 * GitHub reads each comment's line in the diff of the `commit_id` it names, GitLab in the
 * positions' diff_refs: a line of the other diff is refused, or placed on other code.
 */
async function diffAtHead(client: CodehostClient, change: string, reader: LiveChangeReader): Promise<{ live: LiveChange; files: Page<Obj> }> {
  let live = await reader();
  for (let reads = 1; ; reads++) {
    const files = await client.paginate<Obj>(client.host === 'github' ? `${change}/files` : `${change}/diffs`, 3000);
    if (!files.ok) return { live, files };
    const now = await reader.again();
    // Still moving after the last read: the latest head (a refused comment is found and folded alone).
    if (sameChange(live, now) || reads === DIFF_READS) return { live: now, files };
    live = now;
  }
}

/**
 * The diff and its head, once GitLab has prepared the merge request (gitlab-prepared.ts):
 * missing diff_refs or an empty list are read again after a few seconds' wait. Still not
 * prepared then, or the merge request unreadable for a passing reason, the delivery fails
 * retryably (the queue tries it again), instead of folding every finding for good.
 */
async function preparedDiff(client: CodehostClient, subject: Subject, change: string, options: InlineOptions): Promise<{ live: LiveChange; files: Page<Obj> }> {
  const read = () => diffAtHead(client, change, options.live);
  if (client.host !== 'gitlab') return read();
  const suspect = ({ live, files }: { live: LiveChange; files: Page<Obj> }) => (files.ok && (!live.refs || files.items.length === 0) ? files.items.length : undefined);
  const got = await whenPrepared(client, change, read, suspect, options.sleep ?? realSleep);
  const mr = `merge request !${subject.number ?? '?'}`;
  if (got.unprepared) throw new HookError('unavailable', `${unpreparedMessage(got.unprepared, mr)}: the delivery is tried again later`, { retryable: true });
  if (got.failure?.retryable) throw new HookError('unavailable', `GitLab's ${mr} could not be read to place the findings (${got.failure.message}): the delivery is tried again later`, { retryable: true });
  return got.value;
}

/** A GitLab text position; a context line carries both numbers, whichever side the finding names. */
function gitlabPosition(refs: NonNullable<LiveChange['refs']>, oldPath: string, f: Finding, lines: DiffLines): Obj {
  const position: Obj = { position_type: 'text', base_sha: refs.base_sha, start_sha: refs.start_sha, head_sha: refs.head_sha, old_path: oldPath, new_path: f.path };
  if (f.side === 'LEFT') {
    position.old_line = f.line;
    // GitLab needs both on a context line: with old_line alone it is a removed line.
    for (const [newLine, oldLine] of lines.context) {
      if (oldLine === f.line) {
        position.new_line = newLine;
        break;
      }
    }
  } else {
    position.new_line = f.line;
    const old = lines.context.get(f.line);
    if (old !== undefined) position.old_line = old;
  }
  return position;
}
