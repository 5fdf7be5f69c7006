/**
 * Markdown (what models write) to Slack mrkdwn: `**b**` → `*b*`, `*i*`/`_i_` → `_i_`,
 * `~~s~~` → `~s~`, `[t](u)` → `<u|t>`, headings → bold lines, `- ` lists → `• `, and
 * `&`, `<`, `>` escaped; code spans and blocks are left as they are.
 */
const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function convertInline(text: string): string {
  const links: string[] = [];
  let out = text.replace(/\[([^\]\n]+)\]\((https?:\/\/[^)\s]+)\)/g, (_m, label: string, url: string) => {
    links.push(`<${url}|${escape(label)}>`);
    return `\u0000${links.length - 1}\u0000`;
  });
  out = escape(out)
    .replace(/\*\*([^*\n]+)\*\*/g, '\u0001$1\u0001')
    .replace(/__([^_\n]+)__/g, '\u0001$1\u0001')
    .replace(/(^|[^*\w])\*([^*\n]+)\*(?!\w)/g, '$1_$2_')
    .replace(/~~([^~\n]+)~~/g, '~$1~')
    .replace(/\u0001/g, '*');
  return out.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => links[Number(i)] ?? '');
}

function convertLine(line: string): string {
  const heading = /^#{1,6}\s+(.*)$/.exec(line);
  if (heading) return `*${convertInline(heading[1] as string).replace(/\*/g, '')}*`;
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) return `${bullet[1]}• ${convertInline(bullet[2] as string)}`;
  // Inline code spans stay verbatim.
  return line.split(/(`[^`]*`)/).map((part) => (part.startsWith('`') && part.endsWith('`') && part.length > 1 ? part : convertInline(part))).join('');
}

export function markdownToMrkdwn(markdown: string): string {
  let inFence = false;
  return markdown.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      inFence = !inFence;
      return '```';
    }
    return inFence ? line : convertLine(line);
  }).join('\n');
}
