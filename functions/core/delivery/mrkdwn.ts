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

// Placeholders for the links built, in characters no input keeps (stripped first).
const LINK = '\u0000';
const BOLD = '\u0001';

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
  return new RegExp(`(^|[^\\p{L}\\p{N}_*~])${m}([\\p{L}\\p{N}(\\["'\\u0001\\u0000](?:[^\\n]*?[^\\s])??)${m}(?![\\p{L}\\p{N}_])`, 'gu');
};
// Built once: convertInline runs on every line of every Slack reply.
const STRONG_STARS = EMPHASIS(/\*\*/);
const STRONG_UNDERSCORES = EMPHASIS(/__/);
const EMPHASIS_STAR = EMPHASIS(/\*/);
const STRIKE = EMPHASIS(/~~/);

function convertInline(text: string): string {
  const links: string[] = [];
  let out = text.replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, (whole, label: string, raw: string) => {
    const url = slackLinkUrl(raw);
    if (url === undefined) return whole;
    links.push(`<${url}|${escapeSlack(label)}>`);
    return `${LINK}${links.length - 1}${LINK}`;
  });
  out = escapeSlack(out)
    .replace(STRONG_STARS, `$1${BOLD}$2${BOLD}`)
    .replace(STRONG_UNDERSCORES, `$1${BOLD}$2${BOLD}`)
    .replace(EMPHASIS_STAR, '$1_$2_')
    .replace(STRIKE, '$1~$2~')
    .replace(new RegExp(BOLD, 'g'), '*');
  return out.replace(new RegExp(`${LINK}(\\d+)${LINK}`, 'g'), (_m, i: string) => links[Number(i)] ?? '');
}

function convertLine(line: string): string {
  const heading = /^#{1,6}\s+(.*)$/.exec(line);
  if (heading) return `*${convertInline(heading[1] as string).replace(/\*/g, '')}*`;
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) return `${bullet[1]}• ${convertInline(bullet[2] as string)}`;
  // Inline code spans keep their text unformatted, but escaped like everything else.
  return line.split(/(`[^`]*`)/).map((part) => (part.startsWith('`') && part.endsWith('`') && part.length > 1 ? escapeSlack(part) : convertInline(part))).join('');
}

export function markdownToMrkdwn(markdown: string): string {
  let inFence = false;
  return markdown.replace(/[\u0000\u0001]/g, '').split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      inFence = !inFence;
      return '```';
    }
    return inFence ? escapeSlack(line) : convertLine(line);
  }).join('\n');
}
