import { cutText } from '../cut-text';

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
      const chunk = cutText(rest, limit) || rest.slice(0, limit);
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
