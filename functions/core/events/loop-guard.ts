/**
 * The loop guard: every comment hookagent posts carries a hidden marker; an event whose
 * comment or note carries it was caused by hookagent itself and must not wake the agent.
 */
import type { Payload } from './classify';

export const MARKER_PREFIX = '<!-- hookagent:';

export function commentMarker(subscription: string, eventId: string): string {
  return `${MARKER_PREFIX}${subscription}:${eventId} -->`;
}

function bodyOf(value: unknown, key: string): string | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const field = (value as Payload)[key];
  return typeof field === 'string' ? field : undefined;
}

/** True for GitHub comment/review events and GitLab notes whose text carries our marker. */
export function causedByHookagent(payload: Payload): boolean {
  const texts = [
    bodyOf(payload.comment, 'body'),
    bodyOf(payload.review, 'body'),
    // GitLab note events keep the note text in object_attributes.note.
    payload.object_kind === 'note' ? bodyOf(payload.object_attributes, 'note') : undefined,
  ];
  // Inline review comments carry `<!-- hookagent-finding:… -->` (delivery/findings.ts).
  return texts.some((t) => t !== undefined && (t.includes(MARKER_PREFIX) || t.includes('<!-- hookagent-finding:')));
}

/** The hidden marker of a subscription's sticky comment on one pull/merge request or issue. */
export function stickyMarker(subscription: string): string {
  return `${MARKER_PREFIX}${subscription}:sticky -->`;
}

/** The commit a sticky comment reviewed, kept hidden in its footer (read back for incremental reviews). */
export function reviewedMarker(commit: string): string {
  return `<!-- hookagent-reviewed:${commit} -->`;
}

/** The commit named by a sticky comment's footer, if any: the last marker, the footer's (the reply above it cannot hold one, see mentions.ts). */
export function reviewedCommitOf(body: string): string | undefined {
  return [...body.matchAll(/<!-- hookagent-reviewed:([0-9a-f]{7,64}) -->/g)].at(-1)?.[1];
}
