/**
 * Inline findings on the diff: GitHub gets ONE pull request review (`event: COMMENT`)
 * with a comment per finding on a diff line; GitLab gets a discussion per finding with a
 * position (`base_sha`, `start_sha`, `head_sha`, paths, `new_line`/`old_line`). Findings
 * are numbered in the diff the run read (its head: the reply's `hookagent-read` block).
 * Lines are checked against the live diff and posted against the head that diff is of
 * (live-change.ts; the head is read again after the diff, and the diff again if it moved)
 * when that is the head the run read; after a push since, against the diff of the head it
 * read (past-diff.ts: GitHub `commit_id`, GitLab that version's refs), or, when that cannot
 * be, every finding is folded with the reason: never placed on other code.
 * Findings outside it, positions the host rejects, and any failure here are folded into
 * the summary comment instead, so this step does not fail the delivery; the one exception
 * is a GitLab merge request not prepared yet (gitlab-prepared.ts): that delivery fails
 * retryably after a short wait, as its findings will have a diff soon. A review GitHub
 * refuses (422, which names no comment) is sent again in halves, so only the refused
 * comments are folded. Failed writes are tried again after a look for their markers, rate
 * limits waited out (inline-send.ts). One thread per place: while a finding comment of the
 * subscription stands on a place of that diff (not outdated, resolved or not), a finding
 * there is not posted again, however it is worded (inline-held.ts).
 */
import { HookError } from '../errors';
import type { Subject } from '../events/subject';
import type { CodehostClient, Page, ScopedClient } from './codehost-api';
import { commentableLines, type DiffLines } from './diff-lines';
import { forGitlab, githubPlace, gitlabPosition, rangeProblem } from './finding-range';
import { findingBody, findingPlace, type Finding } from './findings';
import { unpreparedMessage, whenPrepared } from './gitlab-prepared';
import { realSleep } from './http';
import { heldPlaces, landedAny, listInline } from './inline-held';
import { inlinePacing, sendInline, sendInParts } from './inline-send';
import { changePathOf, type LiveChange, type LiveChangeReader } from './live-change';
import { placementOf } from './past-diff';

export interface InlineResult {
  posted: number;
  skipped: number;
  /** Findings for the summary, with why they are there. */
  folded: Array<{ finding: Finding; why: string }>;
  /** When the change moved on after the run read it: the head read, where the findings were placed, and the head now. */
  placedOn?: { read: string; head: string };
}

export interface InlineOptions {
  /** The change as the host shows it now, read once per delivery (live-change.ts). */
  live: LiveChangeReader;
  /** The head the run read the diff at (findings are numbered in its diff); absent: the head now. */
  read?: string;
  /** The delivery's sleep and in-place rate-limit maximum (HttpOptions). */
  sleep?: (ms: number) => Promise<void>;
  maxWaitMs?: number;
}

type Obj = Record<string, unknown>;

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
  const on = await placementOf(client, change, { live, files: files.items }, options.read);
  if ('why' in on) {
    foldAll(findings, on.why);
    return result;
  }
  if (on.movedTo && on.commit) result.placedOn = { read: on.commit, head: on.movedTo };
  const diff = new Map<string, DiffLines>();
  const oldPaths = new Map<string, string>();
  /** A renamed file's old name → its new name (how both hosts key the file). */
  const renamedFrom = new Map<string, string>();
  for (const f of on.files) {
    const path = client.host === 'github' ? str(f.filename) : str(f.new_path);
    const old = (client.host === 'github' ? str(f.previous_filename) : str(f.old_path)) || path;
    diff.set(path, commentableLines(client.host === 'github' ? str(f.patch) : str(f.diff)));
    oldPaths.set(path, old);
    if (old !== path) renamedFrom.set(old, path);
  }
  const held = await heldPlaces(client, await listInline(client, change), subscription, on);
  const inline: Finding[] = [];
  for (const found of findings) {
    // A finding on a renamed file may name it by its old path (natural for a removed line):
    // both hosts place it by the new path (GitLab also gets old_path below).
    const renamed = diff.has(found.path) ? undefined : renamedFrom.get(found.path);
    const f = renamed === undefined ? found : { ...found, path: renamed };
    const lines = diff.get(f.path);
    const why = lines && lines.RIGHT.size === 0 && lines.LEFT.size === 0 ? 'the host shows no diff lines for this file: binary, too large, or only renamed'
      : !lines && on.cut ? `not among the files of the diff it was read in (${on.cut})`
        : !lines || !lines[f.side].has(f.line) ? 'outside the diff' : rangeProblem(lines, f);
    if (why) result.folded.push({ finding: f, why });
    // A range is keyed by its last line, as GitHub keys a multi-line comment (`line`) and GitLab places it.
    else if (held.has(findingPlace(subscription, f))) result.skipped++;
    else inline.push(f);
  }
  if (inline.length === 0) return result;
  const pacing = inlinePacing(options.sleep, options.maxWaitMs);

  if (client.host === 'github') {
    // Without a head read now, no commit_id: GitHub then takes the pull request's latest commit, whose diff was just read.
    const at = on.movedTo && on.commit ? ` of ${on.commit.slice(0, 12)}, the commit reviewed (the pull request has moved on since)` : '';
    const review = (part: Finding[]) => ({
      ...(on.commit ? { commit_id: on.commit } : {}), event: 'COMMENT',
      body: `hookagent: ${part.length} finding(s) on changed lines${at}.\n\n${marker}`,
      comments: part.map((f) => ({ ...githubPlace(f), body: findingBody(subscription, f) })),
    });
    // A review is all or nothing: any of its markers found means it was made. A refused one is sent again in halves.
    const sent = await sendInParts(inline, (part) =>
      sendInline(pacing, () => client.request(`${change}/reviews`, { method: 'POST', attempts: 1, body: review(part) }), landedAny(client, change, subscription, part)));
    result.posted = sent.posted.length;
    for (const { items, why } of sent.failed) foldAll(items, `GitHub did not take the inline review (${why})`);
    return result;
  }

  if (!on.refs) {
    foldAll(inline, 'the merge request\'s diff_refs could not be read');
    return result;
  }
  for (const f of inline) {
    const position = gitlabPosition(on.refs, oldPaths.get(f.path) ?? f.path, f, diff.get(f.path)!);
    // As posted (a range's suggestion rewritten): its marker's hash is of this text.
    const shown = forGitlab(f);
    const post = () => client.request(`${change}/discussions`, { method: 'POST', attempts: 1, body: { body: findingBody(subscription, shown), position } });
    const sent = await sendInline(pacing, post, landedAny(client, change, subscription, [shown]));
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
