/**
 * Where text links. Markdown's links and images, found as CommonMark finds them. Bare URLs a
 * host links whole, with no Markdown around them: what is inside one is part of the link, so
 * it is no emphasis (Slack, mrkdwn.ts), no reference and no mention (references.ts); each
 * host by its own rules, and never more than it certainly links.
 */

/**
 * For each position, the `)` ending a link destination that starts there (parentheses inside
 * balanced, `…/wiki/Foo_(bar)`; no space), or -1. One pass from the right, so a line of
 * many `[a](` costs no more than its length: the `)` at the level the destination starts at.
 */
function destinationEnds(text: string): Int32Array {
  const level = new Int32Array(text.length + 1);
  for (let i = 0; i < text.length; i++) level[i + 1] = (level[i] as number) + (text[i] === '(' ? 1 : text[i] === ')' ? -1 : 0);
  const ends = new Int32Array(text.length + 1).fill(-1);
  const closer = new Map<number, number>();
  for (let i = text.length - 1; i >= 0; i--) {
    if (/\s/.test(text[i] as string)) closer.clear();
    else if (text[i] === ')') closer.set(level[i] as number, i);
    const end = closer.get(level[i] as number);
    if (end !== undefined && end > i) ends[i] = end;
  }
  return ends;
}

/** A link or image: from its `[` (or `!`), its label's `]`, to after its `)`. */
interface Found { from: number; close: number; to: number; image: boolean }

/**
 * The links and images of one line as CommonMark finds them (its bracket stack), in order: a
 * `]` closes the nearest `[` still open, and a link followed by `(url)` makes every `[` before
 * it plain text (a link holds no link; an image may be in its label).
 */
function findLinks(text: string): Found[] {
  const ends = text.includes('](') ? destinationEnds(text) : undefined;
  const found: Found[] = [];
  const openers: number[] = [];
  // The openers below this depth are no link any more.
  let inactive = 0;
  for (let i = 0; ends && i < text.length; i++) {
    if (text[i] === '[') openers.push(i);
    if (text[i] !== ']' || openers.length === 0) continue;
    const open = openers.pop() as number;
    const image = text[open - 1] === '!';
    const active = image || openers.length >= inactive;
    inactive = Math.min(inactive, openers.length);
    const end = active && text[i + 1] === '(' ? (ends[i + 2] as number) : -1;
    if (end < 0) continue;
    found.push({ from: image ? open - 1 : open, close: i, to: end + 1, image });
    if (!image) inactive = openers.length;
    i = end;
  }
  return found.sort((a, b) => a.from - b.from);
}

/**
 * Each `[label](url)` and `![alt](src)` of one line replaced by what `replace` gives, with the
 * label as shown: an image in it by its alt text, so `[![CI](badge.svg)](run)` is one link
 * to the run, labelled `CI`.
 */
export function replaceLinks(text: string, replace: (whole: string, label: string, url: string) => string): string {
  const found = findLinks(text);
  // The brackets and destinations of the links in a label: not shown.
  const syntax = new Uint8Array(text.length);
  for (const f of found) syntax.fill(1, f.from, f.from + (f.image ? 2 : 1)).fill(1, f.close, f.to);
  let out = '';
  let done = 0;
  for (const f of found) {
    if (f.from < done) continue;
    let label = '';
    for (let i = f.from + (f.image ? 2 : 1); i < f.close; i++) if (!syntax[i]) label += text[i];
    out += text.slice(done, f.from) + replace(text.slice(f.from, f.to), label, text.slice(f.close + 2, f.to - 1));
    done = f.to;
  }
  return out + text.slice(done);
}

/** A domain as cmark-gfm accepts it after a scheme (an alphanumeric first, no underscore), then neither a host character nor non-ASCII. */
export const DOMAIN = String.raw`[a-z\d][a-z\d-]*(?:\.[a-z\d-]+)*(?![\w.-]|[^\x00-\x7f])`;

/**
 * GitHub's bare links (cmark-gfm's autolink extension): an `http(s)://` URL, or a `www.` link
 * after a space or `*_~(`, up to a space or `<`. Use with the `gi` flags; autolinkEnd then
 * drops the trailing punctuation cmark-gfm leaves out of the link.
 */
export const BARE_LINK = String.raw`(?<![a-z])https?:\/\/${DOMAIN}[^\s<>]*|(?<![^\s*_~(])www\.${DOMAIN}[^\s<>]*`;

/**
 * Where cmark-gfm ends a bare link (autolink_delim): trailing `?!.,:*_~'"` and an entity
 * (`&amp;`) are left out, and so is a `)` that closes more than the link opens. So in
 * `**https://x.example/a**` the `**` closes the bold, and `(see https://x.example/a)` keeps
 * its `)` outside.
 */
export function autolinkEnd(link: string): number {
  let end = link.length;
  while (end > 0) {
    const last = link[end - 1] as string;
    if (`?!.,:*_~'"`.includes(last)) end -= 1;
    else if (last === ';') end = /&[a-z]+;$/i.exec(link.slice(0, end))?.index ?? end - 1;
    else if (last === ')') {
      const head = link.slice(0, end);
      if (head.split(')').length <= head.split('(').length) break;
      end -= 1;
    } else break;
  }
  return end;
}

/** A host Telegram links after `http(s)://` (tdlib fix_url), narrowed: two labels at least, of letters, digits and inner hyphens, 63 at most, the last of letters. */
const TG_LABEL = String.raw`[a-z\d](?:[a-z\d-]{0,61}[a-z\d])?\.`;
/** Top-level domains Telegram links without a scheme too: a few of tdlib's is_common_tld (written in lower case); with any other the URL does not count. */
const TG_COMMON = 'com|org|net|io|dev|app|social';
/**
 * The start of a URL Telegram links (tdlib match_urls): at the text's or a line's start or
 * after a space, maybe after one opening `(["'` (no entity before it reaches into it; a tab
 * or `\r` would not end an earlier URL's path there); the scheme, or a common domain; then
 * its path.
 */
const TG_URL = new RegExp(String.raw`(?<=(?:^|[ \n])[(\["']?)(?:https?:\/\/(?:${TG_LABEL})+[a-z]{2,63}|(?:${TG_LABEL})+(${TG_COMMON}))(?=[/?#])`, 'gi');
/** What ends a path for tdlib (is_url_path_symbol), widened: any space or control character, `<>"«»`, and U+2000 to U+206F. */
const TG_PATH_END = /[\s\x00-\x1f\x7f-\x9f<>"«»\u2000-\u206f]/;

/**
 * The indexes of the `@`s of `line` that sit in the path of a URL Telegram links from before
 * them (tdlib find_entities: the URL starts first, and remove_intersecting_entities drops the
 * mention inside it). Its path ends where tdlib's ends at the latest: at a character no path
 * holds, or at a `)`, `]` or `}` that closes more than the path opens (fix_url).
 */
export function telegramUrlAts(line: string): Set<number> {
  const ats = new Set<number>();
  for (const m of line.matchAll(TG_URL)) {
    if (m[1] !== undefined && m[1] !== m[1].toLowerCase()) continue;
    // How many `(`, `[` and `{` the path holds open.
    const open = [0, 0, 0];
    for (let i = m.index + m[0].length; i < line.length && !TG_PATH_END.test(line[i] as string); i++) {
      const c = line[i] as string;
      const bracket = '([{)]}'.indexOf(c);
      if (bracket >= 0) {
        const count = (open[bracket % 3] ?? 0) + (bracket < 3 ? 1 : -1);
        if (count < 0) break;
        open[bracket % 3] = count;
      } else if (c === '@') ats.add(i);
    }
  }
  return ats;
}
