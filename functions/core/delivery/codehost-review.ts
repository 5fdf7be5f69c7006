/**
 * Inline findings on the diff: GitHub gets ONE pull request review (`event: COMMENT`)
 * with a comment per finding on a diff line; GitLab gets a discussion per finding with a
 * position (`base_sha`, `start_sha`, `head_sha`, paths, `new_line`/`old_line`). Lines are
 * checked against the diff first; findings outside it, positions the host rejects, and
 * any failure here are folded into the summary comment instead, so this step never fails
 * the delivery. A finding already posted on the same place (hidden marker) is not repeated.
 */
import type { Subject } from '../events/subject';
import { isFailure, type CodehostClient } from './codehost-api';
import { commentableLines, findingBody, findingMarker, type DiffLines, type Finding } from './findings';

export interface InlineResult {
  posted: number;
  skipped: number;
  /** Findings for the summary, with why they are there. */
  folded: Array<{ finding: Finding; why: string }>;
}

type Obj = Record<string, unknown>;

/** Tries of the one review request; between them, a look for what an earlier try posted. */
const REVIEW_ATTEMPTS = 3;

/** Whether a review comment carrying one of these findings' markers is on the pull request (the review is all or nothing). */
async function postedAlready(client: CodehostClient, change: string, subscription: string, findings: Finding[]): Promise<boolean> {
  const comments = await client.paginate<Obj>(`${change}/comments`, 3000);
  if (!comments.ok) return false;
  const markers = new Set(findings.map((f) => findingMarker(subscription, f)));
  return (await findingMarkersIn(client, comments.items.map((c) => [c, str(c.body)]))).some((m) => markers.has(m));
}

const FINDING_MARKER = /<!-- hookagent-finding:[^>]* -->/g;

/** The finding markers in comments hookagent wrote itself (own-comments.ts); none when that cannot be told. */
async function findingMarkersIn(client: CodehostClient, comments: Array<[unknown, string]>): Promise<string[]> {
  const marked = comments.filter(([, body]) => body.includes('<!-- hookagent-finding:'));
  if (marked.length === 0) return [];
  const own = await client.ownComments();
  if (isFailure(own)) return [];
  return marked.filter(([comment]) => own(comment)).flatMap(([, body]) => body.match(FINDING_MARKER) ?? []);
}
const str = (v: unknown) => (typeof v === 'string' ? v : '');

export async function postInlineFindings(client: CodehostClient, subject: Subject, subscription: string, marker: string, findings: Finding[]): Promise<InlineResult> {
  const result: InlineResult = { posted: 0, skipped: 0, folded: [] };
  const foldAll = (list: Finding[], why: string) => result.folded.push(...list.map((finding) => ({ finding, why })));
  if (findings.length === 0) return result;
  if (subject.number === undefined || (subject.kind !== 'pull_request' && subject.kind !== 'merge_request')) {
    foldAll(findings, 'not a pull/merge request');
    return result;
  }
  const change = client.host === 'github' ? `/pulls/${subject.number}` : `/merge_requests/${subject.number}`;
  const files = await client.paginate<Obj>(client.host === 'github' ? `${change}/files` : `${change}/diffs`, 3000);
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
  const already = await client.paginate<Obj>(client.host === 'github' ? `${change}/comments` : `${change}/discussions`, 3000);
  const existing = new Set<string>();
  if (already.ok) {
    // GitHub review comments carry the body; GitLab discussions their notes, each with its author.
    const comments = already.items.flatMap((item): Array<[unknown, string]> => client.host === 'github'
      ? [[item, str(item.body)]]
      : (Array.isArray(item.notes) ? item.notes : []).map((n): [unknown, string] => [n, str((n as Obj).body)]));
    for (const m of await findingMarkersIn(client, comments)) existing.add(m);
  }
  const inline: Finding[] = [];
  for (const found of findings) {
    // A finding on a renamed file may name it by its old path (natural for a removed line):
    // both hosts place it by the new path (GitLab also gets old_path below).
    const renamed = diff.has(found.path) ? undefined : renamedFrom.get(found.path);
    const f = renamed === undefined ? found : { ...found, path: renamed };
    const lines = diff.get(f.path);
    if (lines && lines.RIGHT.size === 0 && lines.LEFT.size === 0) result.folded.push({ finding: f, why: 'the host shows no diff lines for this file: binary, too large, or only renamed' });
    else if (!lines || !lines[f.side].has(f.line)) result.folded.push({ finding: f, why: 'outside the diff' });
    else if (existing.has(findingMarker(subscription, f))) result.skipped++;
    else inline.push(f);
  }
  if (inline.length === 0) return result;

  if (client.host === 'github') {
    let commit = subject.commit;
    if (!commit) {
      const pr = await client.request(change);
      commit = pr.ok ? str((JSON.parse(pr.body) as { head?: Obj }).head?.sha) : undefined;
    }
    const body = {
      ...(commit ? { commit_id: commit } : {}), event: 'COMMENT',
      body: `hookagent: ${inline.length} finding(s) on changed lines.\n\n${marker}`,
      comments: inline.map((f) => ({ path: f.path, line: f.line, side: f.side, body: findingBody(subscription, f) })),
    };
    // Never blindly again: after a 5xx or a lost answer, the review may exist (its comments carry the markers).
    let failure: { code: string } | undefined;
    for (let attempt = 0; attempt < REVIEW_ATTEMPTS; attempt++) {
      if (attempt > 0 && (await postedAlready(client, change, subscription, inline))) {
        result.posted = inline.length;
        return result;
      }
      const review = await client.request(`${change}/reviews`, { method: 'POST', attempts: 1, body });
      if (review.ok) {
        result.posted = inline.length;
        return result;
      }
      failure = review.failure;
      if (!review.failure.retryable) break;
    }
    foldAll(inline, `GitHub did not take the inline review (${failure?.code ?? 'failed'})`);
    return result;
  }

  const mr = await client.request(change);
  const refs = mr.ok ? ((JSON.parse(mr.body) as { diff_refs?: Obj }).diff_refs ?? {}) : {};
  if (!str(refs.base_sha) || !str(refs.head_sha) || !str(refs.start_sha)) {
    foldAll(inline, 'the merge request\'s diff_refs could not be read');
    return result;
  }
  for (const f of inline) {
    const lines = diff.get(f.path)!;
    const position: Obj = {
      position_type: 'text', base_sha: refs.base_sha, start_sha: refs.start_sha, head_sha: refs.head_sha,
      old_path: oldPaths.get(f.path) ?? f.path, new_path: f.path,
    };
    if (f.side === 'LEFT') {
      position.old_line = f.line;
      // A context line has both numbers, and GitLab needs both: with old_line alone it is a removed line.
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
    const posted = await client.request(`${change}/discussions`, { method: 'POST', attempts: 1, body: { body: findingBody(subscription, f), position } });
    if (posted.ok) result.posted++;
    else result.folded.push({ finding: f, why: `GitLab did not take the position (${posted.failure.code})` });
  }
  return result;
}
