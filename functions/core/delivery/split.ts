import { cutText } from '../cut-text';

/** An `@` and a name character (references.ts MENTION reads the same ones). */
const NAME_AT = /^@(?:[A-Za-z\d_]|\.[\w.-]*[\w-])/;

/** Splits text into chunks of at most `limit` characters, at line boundaries when it can; none only whitespace unless all are. */
export function splitMessage(text: string, limit: number): string[] {
  const chunks: string[] = [];
  let current = '';
  const push = () => {
    if (current) chunks.push(current);
    current = '';
  };
  for (const line of text.split('\n')) {
    const candidate = current ? `${current}\n${line}` : line;
    if (candidate.length <= limit) {
      current = candidate;
      continue;
    }
    push();
    // A single line longer than the limit is cut hard.
    let rest = line;
    while (rest.length > limit) {
      // Never an empty chunk (a limit of 1 before an emoji): that would not advance.
      let chunk = cutText(rest, limit) || rest.slice(0, limit);
      // Nor a part that starts with `@` and a name: Telegram makes that a mention (tdlib: an `@`
      // at the text's start is one), though after its letter (`deploy@buildhost01`) it was none.
      // Cut one character earlier, so that letter starts the part (e-mail addresses stay as written).
      if (NAME_AT.test(rest.slice(chunk.length))) chunk = cutText(chunk, chunk.length - 1) || chunk;
      chunks.push(chunk);
      rest = rest.slice(chunk.length);
    }
    current = rest;
  }
  push();
  // Telegram trims a message and refuses one with nothing left ("Bad Request: message text is
  // empty"): a part that is only whitespace (a long run of spaces, blank lines after a cut)
  // would fail the delivery midway, so it is left out; it showed nothing.
  const shown = chunks.filter((chunk) => chunk.trim() !== '');
  return shown.length > 0 ? shown : [chunks[0] ?? ''];
}
