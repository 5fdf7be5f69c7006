/**
 * Whether GitLab has prepared a merge request yet. GitLab prepares a new merge request (its
 * diff, `diff_refs`, `changes_count`) asynchronously, and its `open` webhook can come first
 * (gitlab-org/gitlab#386562: `diff_refs` null for 1–5 s); meanwhile `/diffs` answers `[]`.
 * `prepared_at` (GitLab 16.1, gitlab-org/gitlab!122001; older merge requests backfilled) is
 * null until it is done, and `merge_status` is `preparing`. A reader of the diff (the tools,
 * the inline check) waits a few seconds for it, then fails retryably: an empty list read
 * then is no empty diff, and missing diff_refs are no reason to fold the findings for good.
 */
import type { ApiFailure, CodehostClient } from './codehost-api';

/** The waits between reads while GitLab prepares: 6.5 s in all (GitLab takes 1–5 s). */
export const UNPREPARED_WAITS_MS: readonly number[] = [500, 1_000, 2_000, 3_000];

type Obj = Record<string, unknown>;

/**
 * Why `mr` (GET /merge_requests/:iid) is not prepared yet, `listed` being how many files its
 * `/diffs` listed; undefined when it is. A field an older GitLab does not send says nothing.
 */
export function unpreparedSign(mr: Obj, listed: number): string | undefined {
  if (mr.merge_status === 'preparing' || mr.detailed_merge_status === 'preparing') return 'merge_status: preparing';
  if ('prepared_at' in mr && mr.prepared_at === null) return 'prepared_at: null';
  const refs = mr.diff_refs as Obj | null | undefined;
  if ('diff_refs' in mr && (typeof refs !== 'object' || refs === null || typeof refs.head_sha !== 'string' || refs.head_sha === '')) return 'diff_refs: null';
  // A string ("3", "1000+"); "" or null on a merge request that changes nothing.
  if (listed === 0 && Number.parseInt(String(mr.changes_count ?? ''), 10) > 0) return `changes_count: ${String(mr.changes_count)}, but no diffs listed`;
  return undefined;
}

export interface Prepared<T> {
  /** The last read. */
  value: T;
  /** The sign GitLab still gave when the waits ran out (or `stop()` said to stop). */
  unprepared?: string;
  /** Why the merge request itself could not be read (so nothing is known). */
  failure?: ApiFailure['failure'];
}

/**
 * `read()`, again after each wait while GitLab has not prepared the merge request at `change`.
 * `suspect(value)` says when a read needs the check (the number of files it listed), else
 * undefined (it is trusted as it is).
 */
export async function whenPrepared<T>(
  client: CodehostClient, change: string, read: () => Promise<T>, suspect: (value: T) => number | undefined,
  pause: (ms: number) => Promise<void>, stop: () => boolean = () => false,
): Promise<Prepared<T>> {
  for (let attempt = 0; ; attempt++) {
    const value = await read();
    const listed = suspect(value);
    if (listed === undefined) return { value };
    const answer = await client.request(change);
    if (!answer.ok) return { value, failure: answer.failure };
    let mr: unknown;
    try {
      mr = JSON.parse(answer.body);
    } catch {
      mr = undefined;
    }
    const sign = mr && typeof mr === 'object' && !Array.isArray(mr) ? unpreparedSign(mr as Obj, listed) : undefined;
    if (sign === undefined) return { value };
    const wait = UNPREPARED_WAITS_MS[attempt];
    if (wait === undefined || stop()) return { value, unprepared: sign };
    await pause(wait);
  }
}

/** What a reader says when GitLab still has not prepared the merge request after the waits. */
export const unpreparedMessage = (sign: string, mr = 'this merge request') => `GitLab has not prepared ${mr}'s diff yet (${sign}), after waiting ${UNPREPARED_WAITS_MS.reduce((a, b) => a + b, 0) / 1000} s`;
