/**
 * @mentions in GitHub and GitLab comments. Every `@name`, `@org/team`, `@all` in a reply
 * notifies someone, and the reply is model text that payload text can steer: one event
 * could make the bot ping hundreds of people. So, unless `delivery.codehost.allow_mentions`
 * is true, each mention is neutralised by a zero-width space after the `@` (U+200B): it
 * still reads `@alice`, but neither GitHub nor GitLab links or notifies it. HTML entities
 * that render as `@` (`&#64;`, `&#x40;`, `&commat;`) are treated the same way. Code
 * (fenced blocks and inline spans) is left exactly as written: mentions there are never
 * live, and `@Override` or `@dataclass` must stay copyable.
 */
import type { Config } from '../config/types';

export const MENTION_BREAK = '\u200b';

/** `@` (or an entity for it) at a word start, followed by a name character. */
const MENTION = /(^|[^A-Za-z0-9_])(@|&#0*64;|&#x0*40;|&commat;)(?=[A-Za-z0-9_])/gi;
/**
 * A fence as CommonMark (GitHub's and GitLab's Markdown) reads it: at most 3 spaces of
 * indentation, and a backtick fence's info string holds no backtick. "```x``` text" is a
 * paragraph starting with a code span and "    ```" an indented code line: taking either
 * for a fence would leave the mentions of every following line live.
 */
const FENCE_OPEN = /^ {0,3}(`{3,}(?=[^`]*$)|~{3,})/;
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
/** An inline code span: a backtick run not escaped, the same run closing it. */
const CODE_SPAN = /(?<!\\)(`+)(?!`)[^\n]*?(?<!`)\1(?!`)/g;

function neutraliseText(text: string): string {
  return text.replace(MENTION, (_m, before: string) => `${before}@${MENTION_BREAK}`);
}

function neutraliseLine(line: string): string {
  let out = '';
  let last = 0;
  for (const span of line.matchAll(CODE_SPAN)) {
    out += neutraliseText(line.slice(last, span.index)) + span[0];
    last = span.index + span[0].length;
  }
  return out + neutraliseText(line.slice(last));
}

/** The text with every @mention outside code neutralised (pure; idempotent). */
export function neutraliseMentions(text: string): string {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    if (fence !== undefined) {
      const closing = FENCE_CLOSE.exec(line)?.[1];
      if (closing && closing[0] === fence[0] && closing.length >= fence.length) fence = undefined;
      return line;
    }
    const marker = FENCE_OPEN.exec(line)?.[1];
    if (marker) {
      fence = marker;
      return line;
    }
    return neutraliseLine(line);
  }).join('\n');
}

/** What a code-host comment says: the reply, its mentions neutralised unless the configuration allows them. */
export function commentText(reply: string, settings: Pick<Config['delivery'], 'codehost'> | undefined): string {
  return settings?.codehost.allow_mentions === true ? reply : neutraliseMentions(reply);
}
