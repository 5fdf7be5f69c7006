/**
 * Where a zero-width space (U+200B) goes so that a code-host comment's text reads the same
 * but names nobody and nothing: mentions and issue/merge request/commit references.
 *
 * GitHub and GitLab look for them in the text Markdown renders, so a line part is read as
 * rendered: `&#35;`, `&num;` and `\#` are a `#`, `&#49;` a `1`. GitLab reads a link whose
 * href is exactly a reference as that reference, once percent-decoded (`[x](%40bob)`), so
 * `%40` is an `@` too. A match gets the space after its sigil, whatever spelled it; `#` then
 * no longer touches its digits and links nothing.
 *
 * References (docs: GitHub "Autolinked references and URLs", GitLab "GitLab-specific
 * references"): `#123`, `GH-123`, `GL-123`, `!123` (merge request), `&123` (epic), each also
 * after a project path (`owner/repo#123`, `group/sub/project!4`, `project#5`, `group&6`;
 * `#123+` too), `[issue:123]`, `[work_item:group/project/123]`, `[epic:123]` (GitLab; the
 * space goes after the colon), and commits named after a path (`owner/repo@sha`, `user@sha`,
 * `project@a...b`). These create "mentioned this" cross-references on what they name. Left
 * alone: bare SHAs (a commit of the same project: no one is notified, and every hex word
 * would change), snippets `$1`, labels `~x`, milestones `%x` (links only). Digits followed
 * by a letter are no reference (`#1a2b3c`), nor are `C#`, `#!/bin/sh`, `# Title`, `a!b`, `R&D`.
 *
 * URLs the host links whole are left so: link destinations, bare `http(s)://` URLs with a
 * plain domain, `www.` links; what they contain is part of the link, not text, and a space
 * would break them. Only what the host certainly links counts (cmark-gfm's rules, strictest
 * variant: no URL inside an open `[`, none in an HTML block, an escape or entity ends one);
 * whatever else looks like a URL gets the space (a relative `[x](#12)` too): a broken
 * fragment is cosmetic, a missed reference is not. Full issue URLs stay links, though they
 * cross-reference too: they are the links a reply is for, they have to be written out in
 * full (no list of short forms in quoted text turns into them), and breaking them would
 * hide where they lead.
 *
 * Also here: where GitLab itself finds quick actions in a note (gitlabCommandStarts), which
 * a zero-width space before the `/` makes plain text.
 */
import { BARE_LINK, DOMAIN, telegramUrlAts } from './links';

export const BREAK = '\u200b';

/** One rendered character: a backslash escape, an entity, or a character (one UTF-16 unit each way). */
const UNIT = /\\[!-/:-@[-`{-~]|&(?:#\d{1,7}|#[xX][\dA-Fa-f]{1,6}|[A-Za-z][A-Za-z\d]{0,31});|[^]/g;
/** A percent-encoded byte (of a rendered text). */
const PERCENT = /%[\dA-Fa-f]{2}/y;
/** Named entities for the characters references and mentions are made of; other entities only need to be one non-word unit. */
const NAMED: Record<string, string> = { amp: '&', AMP: '&', num: '#', excl: '!', commat: '@', lowbar: '_', UnderBar: '_', sol: '/', period: '.', plus: '+' };
const OTHER = '\ufffd';

function charOf(unit: string): string {
  if (unit.length === 1) return unit;
  if (unit[0] === '\\') return unit[1] as string;
  const name = unit.slice(1, -1);
  if (name[0] !== '#') return NAMED[name] ?? OTHER;
  const code = /x/i.test(name[1] as string) ? parseInt(name.slice(2), 16) : Number(name.slice(1));
  return code > 0 && code < 0x80 ? String.fromCharCode(code) : OTHER;
}

/** A link destination, a bare URL, a `www.` link (after a space or `*_~(`): the ranges the host links whole (trailing punctuation too: no mention ends in it). */
const LINKED = new RegExp(String.raw`\]\(https?:\/\/${DOMAIN}(?:[^\s()<>]|\([^\s()<>]*\))*|${BARE_LINK}`, 'gi');

/** Digits that end a reference: not followed by a letter or digit (`_`, `*`, `+` may close emphasis or ask for a title). */
const NUMBER = String.raw`(?=\d+(?![A-Za-z\d]))`;
const REFERENCE = new RegExp(String.raw`[#!&]${NUMBER}|(?<![A-Za-z\d])G[HL]-${NUMBER}|\[(?:issue|work_item|epic):(?=[\w./-]*\d)|(?<=[A-Za-z\d_.-])@(?=[\dA-Fa-f]{7,40}(?!\w|\.[A-Za-z\d]))`, 'gi');
/** `_` before is no word character here: `_@bob_` is emphasis around a mention. A GitLab namespace may start with dots (`@.ops`), not end in one. */
const MENTION = /(?<![A-Za-z\d])@(?=[A-Za-z\d_]|\.[\w.-]*[\w-])/g;

/**
 * What the line parts read so far say about the next one: how many `[` are open in the
 * paragraph (cmark-gfm links no URL while one is). Not given in an HTML block, where
 * Markdown links nothing.
 */
export interface Reading { open: number }

/** The units of `raw` (escapes and entities blanked) that the host links whole; advances `reading`. */
function linkedUnits(raw: string, reading: Reading | undefined): Uint8Array {
  const linked = new Uint8Array(raw.length);
  if (!reading) return linked;
  const open = new Int32Array(raw.length + 1);
  let depth = reading.open;
  for (let i = 0; i < raw.length; i++) {
    open[i] = depth;
    if (raw[i] === '[') depth += 1;
    else if (raw[i] === ']' && depth > 0) depth -= 1;
  }
  open[raw.length] = reading.open = depth;
  // A destination counts when its `]` closes the last open bracket, a bare URL when none is open.
  for (const m of raw.matchAll(LINKED)) if (open[m.index + (m[0][0] === ']' ? 1 : 0)] === 0) linked.fill(1, m.index + 1, m.index + m[0].length);
  return linked;
}

/**
 * `text` with a break after each match of `pattern` in its rendered reading, except inside
 * what the host links whole. `literal`: a matched entity is written as its character
 * (`&#64;bob` gets a literal `@`, then the break).
 */
function insertBreaks(text: string, reading: Reading | undefined, pattern: RegExp, literal: boolean): string {
  const units = text.match(UNIT) ?? [];
  const rendered = units.map(charOf).join('');
  // A URL is raw text: an escape or entity ends it (it is a separate text node), and neither is a bracket.
  const linked = linkedUnits(units.map((u) => (u.length === 1 ? u : ' ')).join(''), reading);
  // Percent-decoded too; `unit[k]`: the unit the k-th decoded character starts at.
  let decoded = '';
  const unit: number[] = [];
  for (let i = 0; i < rendered.length;) {
    PERCENT.lastIndex = i;
    const byte = PERCENT.test(rendered) ? parseInt(rendered.slice(i + 1, i + 3), 16) : -1;
    unit.push(i);
    decoded += byte < 0 ? rendered[i] : byte < 0x80 ? String.fromCharCode(byte) : OTHER;
    i += byte < 0 ? 1 : 3;
  }
  unit.push(rendered.length);
  const breaks = new Set<number>();
  const spelled = new Set<number>();
  for (const m of decoded.matchAll(pattern)) {
    const at = unit[m.index + m[0].length] as number;
    if (linked[at]) continue;
    breaks.add(at);
    if (literal) for (let i = unit[m.index] as number; i < at; i++) spelled.add(i);
  }
  if (breaks.size === 0) return text;
  return units.map((u, i) => `${breaks.has(i) ? BREAK : ''}${spelled.has(i) && u[0] === '&' ? rendered[i] : u}`).join('');
}

/** Every @mention in a text part inert, but in what the host links whole. */
export const breakMentions = (text: string, reading?: Reading) => insertBreaks(text, reading, MENTION, true);

/** Every issue, merge request, epic and commit reference in a text part inert, but in what the host links whole. */
export const breakReferences = (text: string, reading?: Reading) => insertBreaks(text, reading, REFERENCE, false);

/**
 * Every `@name` in plain text (messengers show the text as it is: no code, no entities), but
 * in the path of a URL Telegram certainly links from before it (links.ts): there it is no
 * mention, and a space would end the link (`https://www.npmjs.com/package/@types/node`). A
 * line longer than `partLength` (Telegram's 4,096, TELEGRAM_TEXT_LIMIT; telegram.ts imports
 * this module) is cut into parts, and a part may start inside a URL: there every `@` gets it.
 */
export function breakPlainMentions(text: string, partLength = 4_096): string {
  return text.split('\n').map((line) => {
    const inUrl = telegramUrlAts(line);
    const spared = line.replace(MENTION, (at: string, i: number) => (inUrl.has(i) ? at : `@${BREAK}`));
    return spared.length <= partLength ? spared : line.replace(MENTION, `@${BREAK}`);
  }).join('\n');
}

/** The first of the ascending `sorted` that is at least `min`, or -1. */
function firstAtLeast(sorted: number[], min: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as number) < min) lo = mid + 1;
    else hi = mid;
  }
  return lo < sorted.length ? (sorted[lo] as number) : -1;
}

/**
 * Where the `/` of each line GitLab would run as a quick action sits in `text`. GitLab's
 * scan (lib/gitlab/quick_actions/extractor.rb) is not CommonMark: it deletes every `\r`,
 * then takes at each line start, in turn, the first of: a code block (a line starting
 * ``` up to the next line that is exactly ```), "inline code" (from there to the first
 * line ending in a backtick after the last backtick that has such a line after it), an
 * HTML block (a `<tag>` line up to a `</tag>` line), a `>>>` quote, or a command (`/`
 * and a name at column 0). So a `~~~`, indented or unclosed fence shields nothing there,
 * and `\r/approve` is a line start. The same scan, linear (every "next" is looked up),
 * taking any `/` and letter for a command name.
 */
export function gitlabCommandStarts(text: string): number[] {
  const at: number[] = [];
  let t = '';
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\r') continue;
    at.push(i);
    t += text[i];
  }
  const len = t.length;
  const eol = (i: number) => i === len || t[i] === '\n';
  const nextGt = new Int32Array(len + 2).fill(-1);
  for (let i = len - 1; i >= 0; i--) nextGt[i] = t[i] === '>' ? i : (nextGt[i + 1] as number);
  const starts = [0];
  const ticks: number[] = [];
  const eolTicks: number[] = [];
  const fences: number[] = [];
  const quotes: number[] = [];
  const htmlEnds = new Map<number, number>();
  for (let i = 0; i < len; i++) {
    if (t[i] === '`') {
      ticks.push(i);
      if (eol(i + 1)) eolTicks.push(i);
    } else if (t[i] === '\n') {
      starts.push(i + 1);
      if (t.startsWith('```', i + 1) && eol(i + 4)) fences.push(i);
      if (t.startsWith('>>>', i + 1) && eol(i + 4)) quotes.push(i);
      const h = t.startsWith('</', i + 1) && i + 3 < len && t[i + 3] !== '>' ? (nextGt[i + 3] as number) : -1;
      if (h >= 0 && eol(h + 1)) htmlEnds.set(i, h + 1);
    }
  }
  const htmlCloses = [...htmlEnds.keys()];
  const lastEol = eolTicks.at(-1) ?? -1;
  // The backtick "inline code" ends its greedy `.*` at: the last one at least 2 before a line-ending one.
  let inlineFrom = -1;
  for (let lo = 0, hi = ticks.length - 1; lo <= hi;) {
    const mid = (lo + hi) >> 1;
    if ((ticks[mid] as number) <= lastEol - 2) {
      inlineFrom = ticks[mid] as number;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  const inlineEnd = inlineFrom >= 0 ? firstAtLeast(eolTicks, inlineFrom + 2) + 1 : -1;
  const found: number[] = [];
  let x = 0;
  for (const p of starts) {
    if (p < x) continue;
    let end = -1;
    if (t.startsWith('```', p)) {
      const n = firstAtLeast(fences, p + 4);
      if (n >= 0) end = n + 4;
    }
    if (end < 0 && inlineFrom >= p) end = inlineEnd;
    if (end < 0 && t[p] === '<') {
      const g = nextGt[p + 1] as number;
      const n = g >= p + 2 && t[g + 1] === '\n' ? firstAtLeast(htmlCloses, g + 3) : -1;
      if (n >= 0) end = htmlEnds.get(n) as number;
    }
    if (end < 0 && t.startsWith('>>>\n', p)) {
      const n = firstAtLeast(quotes, p + 5);
      if (n >= 0) end = n + 4;
    }
    if (end >= 0) x = end;
    else if (t[p] === '/' && /[A-Za-z]/.test(t[p + 1] ?? '')) found.push(at[p] as number);
  }
  return found;
}
