/**
 * Markdown (what models write) to Slack mrkdwn: `**b**` → `*b*`, `*i*`/`_i_` → `_i_`,
 * `~~s~~` → `~s~`, `[t](u)` and `![t](u)` → `<u|t>`, headings → bold lines, `- ` lists → `• `,
 * fenced code → a ``` pair.
 *
 * `&`, `<` and `>` are Slack's control characters everywhere, code included, so they are
 * escaped in every part of the text: no reply (model text, payload text quoted by it) can
 * build `<!channel>`, `<!here>`, `<!everyone>`, `<@U…>`, `<#C…>`, `<!subteam^…>` or
 * `<!date…>`. The only `<…>` this module writes are links whose URL parsed as http(s),
 * with `<`, `>`, `|` percent-encoded and `&` escaped, and whose label is escaped.
 */
import { readBlocks, type BlockLine } from './blocks';
import { autolinkEnd, BARE_LINK, replaceLinks } from './links';

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

// Placeholders for the links built and the text kept as written, in characters no input keeps (stripped first).
const LINK = '\u0000';
const BOLD = '\u0001';
const CODE = '\u0002';
const ESCAPE = '\u0003';
const KEPT = new RegExp(`[${CODE}${ESCAPE}](\\d+)[${CODE}${ESCAPE}]`, 'g');

/**
 * A code span as CommonMark reads one: a run of backticks, text, the same run. Its text is
 * literal on every kind of line (heading, list item, paragraph): `__init__`, `f(*args)`
 * and a cron schedule are shown as written, only escaped.
 */
const CODE_SPAN = /(?<!`)(`+)(?!`)[^]*?[^`]\1(?!`)/g;
/** A backslash escape (CommonMark: any ASCII punctuation): `\*` is a literal `*`, never emphasis, and `\[` opens no link. */
const ESCAPED = /\\[!-/:-@[-`{-~]/g;
const BARE_LINKS = new RegExp(BARE_LINK, 'gi');

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
  return new RegExp(`(^|[^\\p{L}\\p{N}_*~])${m}([\\p{L}\\p{N}(\\["'\\u0000-\\u0003](?:[^\\n]*?[^\\s])??)${m}(?![\\p{L}\\p{N}_])`, 'gu');
};
// Built once: convertInline runs on every line of every Slack reply.
const STRONG_STARS = EMPHASIS(/\*\*/);
const STRONG_UNDERSCORES = EMPHASIS(/__/);
const EMPHASIS_STAR = EMPHASIS(/\*/);
const STRIKE = EMPHASIS(/~~/);

/**
 * One line's inline Markdown. Set aside first, in CommonMark's order, what no emphasis can
 * touch: code spans, backslash escapes, links, and the bare URLs GitHub links whole
 * (links.ts: `…/pkg/__init__.py` stays one link); kept as written, only escaped.
 * `heading` drops strong markers, since the whole line is bold.
 */
function convertInline(text: string, heading = false): string {
  const kept: string[] = [];
  const keep = (mark: string) => (part: string) => {
    kept.push(part);
    return `${mark}${kept.length - 1}${mark}`;
  };
  // The text a kept part stood for; `unescaped`: an escape as the character it escapes.
  const raw = (part: string, unescaped = false) => part.replace(KEPT, (mark: string, i: string) => {
    const was = kept[Number(i)] ?? '';
    return unescaped && mark[0] === ESCAPE ? was.slice(1) : was;
  });
  let out = text.replace(CODE_SPAN, keep(CODE)).replace(ESCAPED, keep(ESCAPE));
  const links: string[] = [];
  // An image becomes a link (Slack shows none; the `!` is dropped).
  out = replaceLinks(out, (whole, shown, dest) => {
    // A code span inside the URL takes precedence (CommonMark): then it is no link.
    const url = dest.includes(CODE) ? undefined : slackLinkUrl(raw(dest, true));
    if (url === undefined) return whole;
    // A label naming another site's address (or one no parser reads) is shown as text (Slack links a plain address on its own), the real link after it.
    const host = new URL(raw(dest, true)).hostname;
    const elsewhere = labelHosts(raw(shown, true)).some((named) => named !== host);
    const label = escapeSlack(shown);
    links.push(!shown ? `<${url}>` : elsewhere ? `${label} (<${url}>)` : `<${url}|${label}>`);
    return `${LINK}${links.length - 1}${LINK}`;
  });
  out = out.replace(BARE_LINKS, (link) => {
    const end = autolinkEnd(link);
    return keep(CODE)(raw(link.slice(0, end))) + link.slice(end);
  });
  const strong = heading ? '$1$2' : `$1${BOLD}$2${BOLD}`;
  out = escapeSlack(out)
    .replace(STRONG_STARS, strong)
    .replace(STRONG_UNDERSCORES, strong)
    .replace(EMPHASIS_STAR, '$1_$2_')
    .replace(STRIKE, '$1~$2~')
    .replace(new RegExp(BOLD, 'g'), '*')
    .replace(new RegExp(`${LINK}(\\d+)${LINK}`, 'g'), (_m, i: string) => links[Number(i)] ?? '');
  return out.replace(KEPT, (_m, i: string) => escapeSlack(kept[Number(i)] ?? ''));
}

function convertLine(line: string): string {
  const heading = /^#{1,6}\s+(.*)$/.exec(line);
  if (heading) return `*${convertInline(heading[1] as string, true)}*`;
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) return `${bullet[1]}• ${convertInline(bullet[2] as string)}`;
  return convertInline(line);
}

/** A fence's run of backticks or tildes, and a line that is only such a run (blocks.ts reads which line opens or closes one). */
const FENCE_RUN = /^(?:`{3,}|~{3,})/;
const FENCE_ONLY = /^(?:`{3,}|~{3,})[ \t]*$/;

/**
 * The reply in mrkdwn. Its blocks are read as GitHub reads them (blocks.ts, cmark-gfm): a
 * fence is one by CommonMark's rules (``` or ~~~, at most 3 spaces in, no backtick in a
 * backtick fence's info string, closed by a run of its character at least as long, or by
 * the end of its list item or quote), so a line starting with a code span (```` ```x``` text ````)
 * is text. Each code block becomes a bare ``` pair around its lines, escaped only (the
 * fence's info string is dropped, an unclosed one closed); indented code is escaped only;
 * every other line is converted.
 */
export function markdownToMrkdwn(markdown: string): string {
  const lines = markdown.replace(/[\u0000-\u0003]/g, '').split(/\r\n|\r|\n/);
  const blocks = readBlocks(lines, true).lines;
  const out: string[] = [];
  let fence: { block: number; run: string } | undefined;
  lines.forEach((line, i) => {
    const { from, kind, block } = blocks[i] as BlockLine;
    if (fence && (kind !== 'code' || block !== fence.block)) {
      // Its list item or quote ended: so did the code block.
      out.push('```');
      fence = undefined;
    }
    const content = line.slice(from);
    if (kind !== 'code') out.push(kind === 'indented' ? escapeSlack(line) : convertLine(line));
    else if (fence === undefined) {
      // The opening line: what its containers start with (a bullet, `>`) on a line of its own.
      const lead = line.slice(0, from).trim() ? convertLine(line.slice(0, from)).trimEnd() : '';
      out.push(...(lead ? [lead] : []), '```');
      fence = { block, run: FENCE_RUN.exec(content)?.[0] ?? '```' };
    } else if (FENCE_ONLY.test(content) && content[0] === fence.run[0] && content.trimEnd().length >= fence.run.length) {
      out.push('```');
      fence = undefined;
    } else out.push(escapeSlack(content));
  });
  if (fence) out.push('```');
  return out.join('\n');
}
