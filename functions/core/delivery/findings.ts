/**
 * Inline findings: what the `record_finding` tool collects during a run travels with the
 * reply (a hidden block at its start, so it is stored, capped and redelivered with it and
 * needs no new store), and the code-host delivery places each on a diff line. Other
 * targets get the findings as a plain list instead of the block.
 */
import { createHash } from 'node:crypto';
import { redactExcerpt, redactSecrets } from '../redact';
import type { Subscription } from '../types';
import { inertText, replyClosers } from './mentions';

export type Severity = 'critical' | 'major' | 'minor' | 'nit';
export const SEVERITIES: readonly Severity[] = ['critical', 'major', 'minor', 'nit'];

export interface Finding {
  path: string;
  /** A multi-line finding's first line (same side, before `line`, one hunk); `line` is its last, where it is keyed and placed. */
  start_line?: number;
  line: number;
  /** RIGHT: the line in the new version (added or context); LEFT: a removed line of the old version. */
  side: 'RIGHT' | 'LEFT';
  severity: Severity;
  body: string;
}

export const MAX_FINDINGS = 30;
export const MAX_FINDING_BODY = 2000;

/** What withFindings keeps of the unread reason. */
const MAX_UNREAD = 500;

const BLOCK = /^<!-- hookagent-findings:([A-Za-z0-9+/=]*) -->\n?/;
/** Why the run could not read the change's diff (every get_change_diff call failed): the reply is no review of it. */
const UNREAD = /^<!-- hookagent-unread:([A-Za-z0-9+/=]*) -->\n?/;
/**
 * The head commit the run read the diff at (agent/tools/codehost.ts changedFiles): its
 * findings are numbered in that diff, so they are placed on it (codehost-review.ts), and the
 * sticky footer names it, not the head at delivery, which a push during the run may have
 * moved past changes no review read.
 */
const READ_HEAD = /^<!-- hookagent-read:([0-9a-f]{40}|[0-9a-f]{64}) -->\n?/;

/**
 * Only the tool loop writes the blocks above (withFindings), so only its replies carry them.
 * Text that starts like one is quoted, so it is not read as one: the model's text (withFindings)
 * and the prompt the echo provider repeats (agent.ts), once each. Payload text steers both, so a
 * reply opening with `<!-- hookagent-findings:…` would otherwise place findings the run never
 * recorded, and `<!-- hookagent-unread:…` would claim the diff was not read. With `--agent none`
 * no agent ran at all: delivery reads no blocks (replyParts).
 */
export const unforged = (reply: string) => reply.replace(/^(\s*)<!--(\s*)(?=hookagent)/i, '$1<!--$2(quoted) ');

/**
 * The reply with the findings block in front (unchanged when there are none), the unread note
 * when the diff could not be read, and the head the diff was read at.
 */
export function withFindings(reply: string, findings: Finding[], unread?: string, readHead?: string): string {
  const read = readHead && !unread && /^([0-9a-f]{40}|[0-9a-f]{64})$/.test(readHead) ? `<!-- hookagent-read:${readHead} -->\n` : '';
  const note = `${unread ? `<!-- hookagent-unread:${Buffer.from(unread.slice(0, MAX_UNREAD)).toString('base64')} -->\n` : ''}${read}`;
  const text = unforged(reply);
  if (findings.length === 0) return `${note}${text}`;
  return `<!-- hookagent-findings:${Buffer.from(JSON.stringify(findings.slice(0, MAX_FINDINGS))).toString('base64')} -->\n${note}${text}`;
}

function valid(f: unknown): f is Finding {
  const o = f as Partial<Finding> | null;
  return !!o && typeof o.path === 'string' && Number.isSafeInteger(o.line) && (o.line as number) > 0 && (o.side === 'RIGHT' || o.side === 'LEFT')
    && SEVERITIES.includes(o.severity as Severity) && typeof o.body === 'string'
    && (o.start_line === undefined || (Number.isSafeInteger(o.start_line) && o.start_line > 0 && o.start_line < (o.line as number)));
}

/** A reply's text without the blocks, and what they carried. */
export interface ReplyParts { text: string; findings: Finding[]; unread?: string; readHead?: string }

/** The findings carried by a reply, and the reply without the blocks. */
export function splitFindings(reply: string): ReplyParts {
  const match = BLOCK.exec(reply);
  let findings: Finding[] = [];
  let text = reply;
  if (match) {
    try {
      const parsed = JSON.parse(Buffer.from(match[1] ?? '', 'base64').toString('utf8')) as unknown;
      findings = Array.isArray(parsed) ? parsed.filter(valid).slice(0, MAX_FINDINGS) : [];
    } catch {
      findings = [];
    }
    text = reply.slice(match[0].length);
  }
  const unread = UNREAD.exec(text);
  if (unread) return { text: text.slice(unread[0].length), findings, unread: Buffer.from(unread[1] ?? '', 'base64').toString('utf8') || 'the diff could not be read' };
  const read = READ_HEAD.exec(text);
  return read ? { text: text.slice(read[0].length), findings, readHead: read[1] } : { text, findings };
}

/**
 * The reply with every configured secret masked in what it shows: its text, each finding's
 * body and path, and the unread reason (a tool's error text). The blocks carry them
 * base64-encoded, out of reach of a mask over the whole reply, so each part is masked and the
 * reply rebuilt. A body or reason that was cut at its cap may end in the start of a secret:
 * that is masked too.
 */
export function maskReply(reply: string, secrets: readonly string[]): string {
  const { text, findings, unread, readHead } = splitFindings(reply);
  const mask = (part: string, cap: number) => redactExcerpt(part, secrets, Infinity, part.length >= cap - 1);
  return withFindings(
    redactSecrets(text, secrets),
    findings.map((f) => ({ ...f, path: redactSecrets(f.path, secrets), body: mask(f.body, MAX_FINDING_BODY) })),
    unread === undefined ? undefined : mask(unread, MAX_UNREAD),
    readHead,
  );
}

/** What a comment says when the run could not read the diff. */
export function unreadNote(why: string): string {
  return `_hookagent could not read this change's diff (${why.replace(/\s*\n\s*/g, ' ')}): the reply above is not a review of the change._`;
}

/** "line 12", or "lines 10–12" for a multi-line finding. */
export const findingLines = (f: Pick<Finding, 'start_line' | 'line'>) => (f.start_line === undefined ? `line ${f.line}` : `lines ${f.start_line}–${f.line}`);

const findingPlaceText = (f: Finding) => `- **${f.severity}** \`${f.path}\` ${findingLines(f)}${f.side === 'LEFT' ? ' (removed)' : ''}`;

/** A finding as one list line (chat targets): its body's lines joined. */
export function findingLine(f: Finding): string {
  return `${findingPlaceText(f)}: ${f.body.replace(/\s*\n\s*/g, ' ')}`;
}

/**
 * A finding the code host could not take inline, with why, for the summary comment. A body
 * of several lines keeps them, indented under its list item, so a code sample or suggestion
 * stays a block with its indentation; what it leaves open is closed inside the item.
 */
export function foldedFinding(f: Finding, why: string): string {
  if (!f.body.includes('\n')) return `${findingLine(f)} _(${why})_`;
  const body = `${f.body}${replyClosers(f.body)}`;
  return `${findingPlaceText(f)} _(${why})_:\n${body.split('\n').map((line) => (line.trim() === '' ? '' : `  ${line}`)).join('\n')}`;
}

/**
 * What a delivered reply carries: an `--agent none` reply is the rendered template (payload
 * text, no agent ran), so it carries no blocks whatever it starts with; an agent's is split.
 */
export function replyParts(reply: string, subscription: Pick<Subscription, 'agent'>): ReplyParts {
  return subscription.agent === 'none' ? { text: reply, findings: [] } : splitFindings(reply);
}

/** What hookagent writes after a reply: its findings and why the diff was unread. */
export type ReplyAdditions = Pick<ReplyParts, 'findings' | 'unread'>;

/**
 * What targets that cannot place findings on lines show after the reply, each a Markdown
 * block: the **Findings** list (its first `shown` findings, the rest counted) and the unread note.
 */
export function listedAdditions({ findings, unread }: ReplyAdditions, shown = findings.length): string[] {
  const more = findings.length - shown;
  const list = [...findings.slice(0, shown).map(findingLine), ...(more > 0 ? [`- _…and ${more} more finding${more === 1 ? '' : 's'}_`] : [])];
  return [...(findings.length > 0 ? [`**Findings**\n${list.join('\n')}`] : []), ...(unread ? [unreadNote(unread)] : [])];
}

/** For targets that cannot place findings on lines: the reply with the findings as a list. */
export function flattenFindings(reply: string | ReplyParts): string {
  const parts = typeof reply === 'string' ? splitFindings(reply) : reply;
  return [parts.text, ...listedAdditions(parts)].join('\n\n');
}

/**
 * The hidden marker of an inline finding: subscription, place (side, line, path) and a short
 * hash of what it says. A re-review skips a finding by its place (findingPlace): the model
 * words a finding differently at each run, so one thread per line. The hash tells whether
 * a write whose answer was lost made this very comment (codehost-review.ts landedAny).
 */
export function findingMarker(subscription: string, f: Finding): string {
  return hashed(findingPlace(subscription, f), shownText(f));
}

/** The marker earlier versions wrote: the place only (still read, see postedFindings); a place's key. */
export function findingPlace(subscription: string, f: Pick<Finding, 'path' | 'line' | 'side'>): string {
  return `${FINDING_MARKER_HEAD}${subscription}:${f.side}:${f.line}:${Buffer.from(f.path).toString('base64')} -->`;
}

/** A place marker with the hash of the finding's shown text added. */
const hashed = (place: string, shown: string) => `${place.slice(0, -' -->'.length)}:${findingHash(shown)} -->`;

export const FINDING_MARKER_HEAD = '<!-- hookagent-finding:';
/** Subscription, side, line, base64 path, and the hash (absent in markers of earlier versions): subscription names hold no `:`. */
const FINDING_MARKER = /<!-- hookagent-finding:([^:\s>]+):(RIGHT|LEFT):(\d+):([A-Za-z0-9+/=]*)(?::([0-9a-f]{12}))? -->/g;

/** What hashes a finding: its text as posted, whitespace and case folded (a host may turn \n into \r\n). */
const findingHash = (shown: string) => createHash('sha256').update(shown.replace(/\s+/g, ' ').trim().toLowerCase()).digest('hex').slice(0, 12);

/**
 * A first line that opens a block (a fence such as ```suggestion, a heading, quote, list,
 * table, HTML or indented code): such a block must start its own line, so it cannot follow
 * the severity on the same one. Matching a little more than that only costs a line break.
 */
const OPENS_BLOCK = /^(?: {0,3}(?:`{3}|~{3}|#|>|[-+*](?:[ \t]|$)|\d{1,9}[.)]|\||<)| {4}|\t)/;

/** The visible part of an inline comment: severity and body, made inert and closed (mentions.ts). */
function shownText(f: Finding): string {
  // Model text: @mentions and issue/MR references are always made inert in inline findings;
  // what it leaves open (a fence) is closed, so the hidden marker after it stays hidden.
  const body = inertText(f.body);
  // A body that opens with a block gets its own paragraph: after "**critical**: " on the same
  // line a ```suggestion fence is no fence (no suggestion to apply), and its closing fence
  // would open one that turns the explanation after it into code.
  const text = OPENS_BLOCK.test(body) ? `**${f.severity}**\n\n${body}` : `**${f.severity}**: ${body}`;
  return `${text}${replyClosers(text)}`;
}

export function findingBody(subscription: string, f: Finding): string {
  const shown = shownText(f);
  return `${shown}\n\n${hashed(findingPlace(subscription, f), shown)}`;
}

/**
 * A finding marker in a posted comment: whose, and where it was put. `key`: the marker as
 * findingMarker writes it; absent in markers of earlier versions, which carry the place only.
 */
export interface PostedFinding extends Pick<Finding, 'path' | 'line' | 'side'> { subscription: string; key?: string }

/** The findings an inline comment hookagent posted stands for (its markers). */
export function postedFindings(body: string): PostedFinding[] {
  return [...body.matchAll(FINDING_MARKER)].map((m) => ({
    subscription: m[1] as string, side: m[2] as Finding['side'], line: Number(m[3]), path: Buffer.from(m[4] ?? '', 'base64').toString('utf8'),
    ...(m[5] === undefined ? {} : { key: m[0] }),
  }));
}
