/**
 * Markdown (what models write) to Slack mrkdwn: `**b**` → `*b*`, `*i*`/`_i_` → `_i_`,
 * `~~s~~` → `~s~`, `[t](u)` → `<u|t>`, headings → bold lines, `- ` lists → `• `.
 *
 * `&`, `<` and `>` are Slack's control characters everywhere, code included, so they are
 * escaped in every part of the text: no reply (model text, payload text quoted by it) can
 * build `<!channel>`, `<!here>`, `<!everyone>`, `<@U…>`, `<#C…>`, `<!subteam^…>` or
 * `<!date…>`. The only `<…>` this module writes are links whose URL parsed as http(s),
 * with `<`, `>`, `|` percent-encoded and `&` escaped, and whose label is escaped.
 */
export const escapeSlack = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** An http(s) URL as Slack's link syntax needs it, or undefined (then the link stays text). */
export function slackLinkUrl(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  return url.href.replace(/</g, '%3C').replace(/>/g, '%3E').replace(/\|/g, '%7C').replace(/&/g, '&amp;');
}

/** What ends a host in a label: space, a path, query or fragment start, and the markup around it (`<…>`, `*`, `~`, `(…)`, quotes). */
const ENDS = String.raw`\s/?#\\<>*~|()"'\x60,;!`;
/**
 * An address anywhere in a label: `//` and its host (whatever scheme, if any, is before it), a
 * `www.` name, or `host.tld/` (its host from the last character that ends one); each with the
 * rest of its word, so a dotted path segment (`/tree/release.next/`) is no second address.
 * Every match starts at `//`, `www.` or such a boundary, so a long label is read in one pass.
 */
const ADDRESS = new RegExp(String.raw`\/\/([^${ENDS}]+)\S*|(www\.[^${ENDS}]+)\S*|(?<![^${ENDS}:@])([^${ENDS}:@]+\.[a-z][a-z\d-]+(?::\d+)?)\/\S*`, 'giu');

/**
 * The hosts a link label names where it reads as an address (`https://bank.example/login`,
 * `www.bank.example`, `bank.example/login`), anywhere in it, as a URL parser spells them (lower
 * case, punycode); undefined for one no parser reads. Slack shows only the label of
 * `<url|label>`, so `[https://github.com/o/r](https://evil.example)` in payload text quoted by a
 * reply would show one site and open another. The label is read as shown: compatibility forms
 * folded (full-width `：／／`), invisible format characters (U+200B, U+2060, bidi marks: \p{Cf}) dropped.
 */
export function labelHosts(label: string): Array<string | undefined> {
  const shown = label.normalize('NFKC').replace(/\p{Cf}/gu, '');
  return [...shown.matchAll(ADDRESS)].map((m) => {
    const authority = (m[1] ?? m[2] ?? m[3] ?? '').replace(/^[^@]*@/, '').replace(/[.:]+$/, '');
    try {
      return new URL(`http://${authority}`).hostname;
    } catch {
      return undefined;
    }
  });
}

// Placeholders for the links built and code spans kept, in characters no input keeps (stripped first).
const LINK = '\u0000';
const BOLD = '\u0001';
const CODE = '\u0002';

/**
 * A code span as CommonMark reads one: a run of backticks, text, the same run. Its text is
 * literal on every kind of line (heading, list item, paragraph): `__init__`, `f(*args)`
 * and a cron schedule are shown as written, only escaped.
 */
const CODE_SPAN = /(?<!`)(`+)(?!`)[^]*?[^`]\1(?!`)/g;

/**
 * Each `[label](url)` with the URL's parentheses balanced (CommonMark), so
 * `(https://en.wikipedia.org/wiki/Foo_(bar))` is one URL; `replace` gives its text.
 */
function replaceLinks(text: string, replace: (whole: string, label: string, url: string) => string): string {
  const open = /\[([^\]\n]+)\]\(/g;
  let out = '';
  let done = 0;
  for (let m = open.exec(text); m; m = open.exec(text)) {
    let depth = 0;
    let end = open.lastIndex;
    for (; end < text.length && !/\s/.test(text[end] as string); end++) {
      if (text[end] === '(') depth++;
      else if (text[end] === ')' && depth-- === 0) break;
    }
    if (text[end] !== ')' || end === open.lastIndex) continue;
    out += text.slice(done, m.index) + replace(text.slice(m.index, end + 1), m[1] as string, text.slice(open.lastIndex, end));
    done = end + 1;
    open.lastIndex = done;
  }
  return out + text.slice(done);
}

/**
 * A pair of `marker`s around text, as Markdown means emphasis: the opening marker starts a
 * word (after the line's start, a space or punctuation, and before a letter, digit or
 * opening quote or bracket), the closing one ends it (after a non-space, before anything
 * but a word character). So a cron schedule (`0 * * * *`), `5 * 3 * 2`, globs such as
 * `*.tmp and *.log` and paths ending in `/*` stay as written instead of turning into
 * italics markers.
 */
const EMPHASIS = (marker: RegExp) => {
  const m = marker.source;
  return new RegExp(`(^|[^\\p{L}\\p{N}_*~])${m}([\\p{L}\\p{N}(\\["'\\u0000-\\u0002](?:[^\\n]*?[^\\s])??)${m}(?![\\p{L}\\p{N}_])`, 'gu');
};
// Built once: convertInline runs on every line of every Slack reply.
const STRONG_STARS = EMPHASIS(/\*\*/);
const STRONG_UNDERSCORES = EMPHASIS(/__/);
const EMPHASIS_STAR = EMPHASIS(/\*/);
const STRIKE = EMPHASIS(/~~/);

/**
 * One line's inline Markdown. Code spans are set aside first (their text is never
 * formatted) and links next; `heading` drops strong markers, since the whole line is bold.
 */
function convertInline(text: string, heading = false): string {
  const codes: string[] = [];
  let out = text.replace(CODE_SPAN, (span) => {
    codes.push(escapeSlack(span));
    return `${CODE}${codes.length - 1}${CODE}`;
  });
  const links: string[] = [];
  out = replaceLinks(out, (whole, label, raw) => {
    // A code span inside the URL takes precedence (CommonMark): then it is no link.
    const url = raw.includes(CODE) ? undefined : slackLinkUrl(raw);
    if (url === undefined) return whole;
    // A label naming another site's address (or one no parser reads) is shown as text (Slack links a plain address on its own), the real link after it.
    const host = new URL(raw).hostname;
    const elsewhere = labelHosts(label).some((named) => named !== host);
    links.push(elsewhere ? `${escapeSlack(label)} (<${url}>)` : `<${url}|${escapeSlack(label)}>`);
    return `${LINK}${links.length - 1}${LINK}`;
  });
  const strong = heading ? '$1$2' : `$1${BOLD}$2${BOLD}`;
  out = escapeSlack(out)
    .replace(STRONG_STARS, strong)
    .replace(STRONG_UNDERSCORES, strong)
    .replace(EMPHASIS_STAR, '$1_$2_')
    .replace(STRIKE, '$1~$2~')
    .replace(new RegExp(BOLD, 'g'), '*')
    .replace(new RegExp(`${LINK}(\\d+)${LINK}`, 'g'), (_m, i: string) => links[Number(i)] ?? '');
  return out.replace(new RegExp(`${CODE}(\\d+)${CODE}`, 'g'), (_m, i: string) => codes[Number(i)] ?? '');
}

function convertLine(line: string): string {
  const heading = /^#{1,6}\s+(.*)$/.exec(line);
  if (heading) return `*${convertInline(heading[1] as string, true)}*`;
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) return `${bullet[1]}• ${convertInline(bullet[2] as string)}`;
  return convertInline(line);
}

export function markdownToMrkdwn(markdown: string): string {
  let inFence = false;
  return markdown.replace(/[\u0000-\u0002]/g, '').split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      inFence = !inFence;
      return '```';
    }
    return inFence ? escapeSlack(line) : convertLine(line);
  }).join('\n');
}
