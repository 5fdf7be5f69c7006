/**
 * Text cut to a number of UTF-16 units (what `String.length` counts) without splitting a
 * surrogate pair: an emoji cut in half leaves a lone surrogate, which is not Unicode.
 * Slack and Telegram then receive `\ud83c`, JSON encoders escape it, and a store that
 * encodes UTF-8 keeps U+FFFD instead, so the record no longer matches what was delivered.
 */

/** The first `limit` units of `text`, or one fewer where the last would be half a pair. */
export function cutText(text: string, limit: number): string {
  if (text.length <= limit) return text;
  if (limit <= 0) return '';
  const last = text.charCodeAt(limit - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? limit - 1 : limit);
}
