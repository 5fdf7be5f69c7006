/**
 * The loop guard: every comment hookagent posts ends with a hidden marker; an event whose
 * comment, review or note ends with one, where hookagent writes it, was caused by hookagent
 * itself and must not wake the agent.
 *
 * The marker counts only in hookagent's form and place, not wherever its text appears: a
 * human who quotes a comment of hookagent's (`> ` lines), pastes it into code, or types the
 * string is not ignored, so `@bot` requests in that reply still run. hookagent writes it last,
 * on a line of its own at column 0 (codehost-comment.ts, codehost-review.ts, findings.ts
 * findingBody), after a reply whose open fences and HTML are closed (mentions.ts
 * replyClosers), so there it is an HTML block in both readings GitHub and GitLab use
 * (blocks.ts). At the end of a paragraph's last line (`ok <!-- hookagent:… -->`) it counts
 * too, when the paragraph is at the top level.
 *
 * The author is not used. A payload cannot show that a comment is not hookagent's: with a
 * token hookagent posts as that token's user (GitHub `user.type` `User`, no
 * `performed_via_github_app`; GitLab notes name no kind of user at all), and only the
 * delivery settings, which ingest does not read, say whether it posts as an App.
 */
import { readBlocks, type BlockLine } from '../delivery/blocks';
import { SUBSCRIPTION_NAME_PATTERN } from '../types';
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

/** True for GitHub comment/review events and GitLab notes whose text ends with our marker, where hookagent writes it. */
export function causedByHookagent(payload: Payload): boolean {
  const texts = [
    bodyOf(payload.comment, 'body'),
    bodyOf(payload.review, 'body'),
    // GitLab note events keep the note text in object_attributes.note.
    payload.object_kind === 'note' ? bodyOf(payload.object_attributes, 'note') : undefined,
  ];
  return texts.some((t) => t !== undefined && endsWithOwnMarker(t));
}

/**
 * The longest text hookagent writes in one comment: GitLab's note limit (GITLAB_NOTE_LIMIT in
 * codehost-comment.ts, which imports this module; GitHub's is lower). A longer text is not
 * hookagent's and is not read.
 */
export const LONGEST_OWN_TEXT = 1_000_000;

const NAME = SUBSCRIPTION_NAME_PATTERN.source.replace(/^\^|\$$/g, '');
/**
 * The markers a comment of hookagent's ends with: an event's or the sticky one (commentMarker,
 * stickyMarker), or an inline finding's (findings.ts findingMarker; without the hash in
 * comments of earlier versions).
 */
const OWN_MARKER = new RegExp(String.raw`^<!-- hookagent(?::${NAME}:[^\s>]+|-finding:${NAME}:(?:RIGHT|LEFT):\d+:[A-Za-z0-9+/=]*(?::[0-9a-f]{12})?) -->$`);

/**
 * Containers (block quotes, list items) take a column of a line each at least, so the columns
 * of what their prefixes are made of bound how deep a text nests. Past this the text is not
 * read (the reading costs a pass per level, and per blank line after) and one that ends with
 * our marker counts as ours: answering a comment of hookagent's is the worse mistake (a
 * subscription echoing comments would answer itself).
 */
const MAX_PREFIX_COLUMNS = 40;
/** A line's leading run of spaces, tabs, `>` and list markers (a tab counts 4 columns). */
const PREFIX = /^(?:[ \t>]|[-+*](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$))*/;
const prefixColumns = (line: string) => {
  const run = PREFIX.exec(line)?.[0] ?? '';
  return run.length + 3 * (run.split('\t').length - 1);
};

/** Whether `text` ends with one of hookagent's markers at the top level, outside code. */
export function endsWithOwnMarker(text: string): boolean {
  if (text.length > LONGEST_OWN_TEXT) return false;
  const body = text.trimEnd();
  const last = body.slice(Math.max(body.lastIndexOf('\n'), body.lastIndexOf('\r')) + 1);
  // Found from its start, then matched whole: no scan over a long last line per position.
  const at = last.lastIndexOf('<!-- hookagent');
  if (at < 0 || !OWN_MARKER.test(last.slice(at))) return false;
  // A line that starts indented, in a block quote or with a list item is not at column 0.
  if (prefixColumns(last) > 0) return false;
  // `<!--` at column 0 starts an HTML block: no block quote or list item goes on over it, it is
  // no lazy paragraph line and no indented code. Only a fence left open can hold it.
  if (at === 0 && !body.includes('```') && !body.includes('~~~')) return true;
  const lines = body.split(/\r\n|\r|\n/);
  if (lines.some((line) => prefixColumns(line) > MAX_PREFIX_COLUMNS)) return true;
  return [false, true].every((gfm) => atTopLevel(readBlocks(lines, gfm).lines, at === 0));
}

/**
 * Whether the last line is outside code and containers: the marker's own line an HTML block
 * at column 0, or a paragraph line at column 0 whose paragraph started at column 0 (a line
 * there is in a container only lazily, as part of a paragraph that started inside one).
 */
function atTopLevel(lines: readonly BlockLine[], ownLine: boolean): boolean {
  const last = lines.at(-1);
  if (!last || last.from !== 0) return false;
  if (ownLine) return last.kind === 'html';
  if (last.kind !== 'text') return false;
  let first = lines.length - 1;
  while (first > 0 && lines[first - 1]!.block === last.block) first -= 1;
  return lines[first]!.from === 0;
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
