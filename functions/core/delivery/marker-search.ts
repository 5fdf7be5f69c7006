/**
 * The marker search of `codehost_comment`: the event's own comment and the sticky one,
 * among the comments hookagent's credentials wrote, read at both ends of a long thread. Up
 * to SEARCH_LIMIT comments are read newest first: GitHub's list from its last page back (it
 * lists comments oldest first and cannot sort them), GitLab's notes by `updated_at`, so a
 * sticky note edited at each event stays near the top. When that stopped early without
 * finding the sticky comment, up to SEARCH_LIMIT more are read oldest first, where a
 * sticky comment made when the change opened is. (Before, only the 3,000 oldest were read
 * on GitHub, and GitLab's newest by `created_at`: on a longer thread the event's comment or
 * the sticky one was missed and posted again: hunt 10.)
 */
import { MARKER_PREFIX } from '../events/loop-guard';
import { isFailure, type ApiFailure, type ScopedClient } from './codehost-api';
import type { OwnComment } from './own-comments';

/** How many comments each end of the search reads. */
export const SEARCH_LIMIT = 3000;

export type Comment = { id?: number; body?: string; note?: string; html_url?: string };
export const textOf = (c: Comment) => c.body ?? c.note ?? '';

export interface MarkerSearch {
  /** The comment that carries the event's marker: it was posted already. */
  event?: Comment;
  /** The sticky comment, when one was asked for and found. */
  sticky?: Comment;
  /** How many comments were read. */
  read: number;
  /** Why the search may have missed a comment (it stopped before the end of the thread); absent when it read them all or found what it looked for. */
  truncated?: string;
}

/** The two ends of `path` the search reads, newest first (GitLab notes take an order; GitHub comments and GitLab commit comments do not). */
function ends(path: string, notes: boolean): Array<{ path: string; fromLast: boolean }> {
  if (notes) return [{ path: `${path}?order_by=updated_at&sort=desc`, fromLast: false }, { path: `${path}?order_by=created_at&sort=asc`, fromLast: false }];
  return [{ path, fromLast: true }, { path, fromLast: false }];
}

/**
 * The comment at `path` carrying `eventMarker`, else the one carrying `stickyMarker`, among
 * the comments these credentials wrote (markers copied into anyone else's do not count).
 * Each page is checked as it arrives, so the walk ends where they are.
 */
export async function searchMarkers(client: ScopedClient, path: string, notes: boolean, eventMarker: string, stickyMarker?: string): Promise<MarkerSearch | ApiFailure> {
  let own: OwnComment | undefined;
  let found: { event?: Comment; sticky?: Comment } | ApiFailure | undefined;
  const check = async (page: Comment[]): Promise<boolean> => {
    const marked = page.filter((c) => textOf(c).includes(MARKER_PREFIX));
    if (marked.length === 0) return false;
    if (!own) {
      const who = await client.ownComments();
      if (isFailure(who)) {
        found = who;
        return true;
      }
      own = who;
    }
    const mine = marked.filter(own);
    const event = mine.find((c) => textOf(c).includes(eventMarker));
    const sticky = stickyMarker === undefined ? undefined : mine.find((c) => typeof c.id === 'number' && textOf(c).includes(stickyMarker));
    if (event) found = { event };
    else if (sticky) found = { sticky };
    return found !== undefined;
  };
  let read = 0;
  const stops: string[] = [];
  for (const end of ends(path, notes)) {
    const listed = await client.readList<Comment>(end.path, SEARCH_LIMIT, { fromLast: end.fromLast, until: check });
    if (!listed.ok) return listed;
    read += listed.items.length;
    if (found) return isFailure(found) ? found : { ...found, read };
    if (!listed.truncated) return { read };
    stops.push(listed.truncated);
    // The event's own comment is newer than the event: the oldest end is read only for a sticky comment.
    if (stickyMarker === undefined) break;
  }
  return { read, truncated: [...new Set(stops)].join('; ') };
}
