/**
 * The finding comments hookagent already has on a pull/merge request: which places of the
 * diff they hold (one thread per place, however a re-review words a finding), and whether a
 * write whose answer was lost made one after all (by its hash).
 */
import { isFailure, type CodehostClient, type ScopedClient } from './codehost-api';
import { findingMarker, findingPlace, postedFindings, FINDING_MARKER_HEAD, type Finding } from './findings';
import type { Placement } from './past-diff';

type Obj = Record<string, unknown>;
/** A listed comment and its text. */
export type Listed = [unknown, string];

const str = (v: unknown) => (typeof v === 'string' ? v : '');
const obj = (v: unknown): Obj | undefined => (v && typeof v === 'object' ? (v as Obj) : undefined);

/** The listed review comments (GitHub) or discussion notes (GitLab), each with its text; none when the list cannot be read. */
export async function listInline(client: ScopedClient, change: string): Promise<Listed[]> {
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

/** Where a comment stands in the diff findings are placed on: its path and its line on a side. */
interface Standing { path: unknown; line: (side: Finding['side']) => unknown }

/**
 * Where a comment stands in `on`, or nothing when it holds no place there. A comment whose
 * line changed since holds none. GitHub marks it (`line: null`). GitLab sends no `line`: it
 * moves a diff note's position forward to the new diff_refs when its line is unchanged, and
 * leaves it at the old version's otherwise, so a note counts only when its position is of
 * `on`'s refs (one naming no refs, none GitLab writes, says nothing either way). On an
 * earlier head's diff (a push after the run read it), a GitHub comment stands where it was
 * made (`original_line`) when it was made on that commit (`original_commit_id`).
 */
function standing(comment: unknown, on: Placement): Standing | undefined {
  const c = obj(comment) ?? {};
  const position = obj(c.position);
  if (position) {
    const other = (key: 'head_sha' | 'start_sha') => typeof position[key] === 'string' && on.refs !== undefined && position[key] !== on.refs[key];
    if (other('head_sha') || other('start_sha')) return undefined;
    return { path: position.new_path, line: (side) => position[side === 'RIGHT' ? 'new_line' : 'old_line'] };
  }
  if (on.movedTo) return c.original_commit_id === on.commit ? { path: c.path, line: () => c.original_line } : undefined;
  return c.line === null ? undefined : { path: c.path, line: () => c.line };
}

/**
 * The places (findingPlace) the subscription's own finding comments hold in `on`, each where
 * the host shows it: a push that leaves its line unchanged moves it with its code (GitHub
 * its `line`; GitLab its position's new_line/old_line, the marker's side). The marker's
 * place stands for what the host does not say.
 */
export async function heldPlaces(client: CodehostClient, comments: Listed[], subscription: string, on: Placement): Promise<Set<string>> {
  const held = new Set<string>();
  for (const [comment, body] of await ownFindingComments(client, comments)) {
    const at = standing(comment, on);
    if (!at) continue;
    for (const p of postedFindings(body)) {
      if (p.subscription !== subscription) continue;
      const line = at.line(p.side);
      held.add(findingPlace(subscription, { side: p.side, path: typeof at.path === 'string' ? at.path : p.path, line: typeof line === 'number' ? line : p.line }));
    }
  }
  return held;
}

/** After a failed try: whether a comment carrying one of these findings' markers is there now (made before the answer was lost). */
export function landedAny(client: ScopedClient, change: string, subscription: string, findings: Finding[]): () => Promise<boolean> {
  return async () => {
    // By the hash: an older comment on the same place is no sign that this write was made.
    const mine = await ownFindingComments(client, await listInline(client, change));
    const keys = new Set(mine.flatMap(([, body]) => postedFindings(body).flatMap((p) => p.key ?? [])));
    return findings.some((f) => keys.has(findingMarker(subscription, f)));
  };
}
