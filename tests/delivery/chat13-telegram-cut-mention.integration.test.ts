/**
 * Round 13 (chat), Telegram: an `@` right after a letter or digit is left as written
 * (`deploy@buildhost01`, `ops@example.com`: Telegram makes no mention there, tdlib
 * find_mentions skips an `@` after a word character). A line longer than 4,096 characters is
 * cut hard into parts; when a cut falls just before such an `@`, the next message starts with
 * `@buildhost01 …`, which Telegram does make a mention (a notification for that member, even
 * in a muted group). The README: "every `@` of a line longer than 4,096 characters" gets the
 * space, since "a part may start inside a URL". Replies go to a local Telegram Bot API server.
 */
import { splitMessage } from '../../functions/core/delivery/split';
import { useTelegramSent } from '../support/telegram-sent';

/** The texts of the messages Telegram receives for `reply`, in order. */
const sent = useTelegramSent();

/** A mention as Telegram reads one: `@` and a name, not after a word character (or at the message's start). */
const LIVE_MENTION = /(?:^|[^\p{L}\p{N}_])@[A-Za-z][A-Za-z\d_]{3,31}/u;

test('a long line cut just before "user@host": the next part does not start with a live @mention', async () => {
  // A one-line log excerpt (a payload value an --agent none template quotes) with the cut at 4,096.
  const head = `${'x'.repeat(4_089)} deploy`;
  expect(head).toHaveLength(4_096);
  const parts = await sent(`${head}@buildhost01 failed: connection refused`);
  expect(parts).toHaveLength(2);
  expect(parts[1]).not.toMatch(LIVE_MENTION);
});

test('the same with an e-mail address', async () => {
  const head = `${'x'.repeat(4_092)} ops`;
  expect(head).toHaveLength(4_096);
  const parts = await sent(`${head}@example.com paged`);
  expect(parts[1]).not.toMatch(LIVE_MENTION);
});

test('splitMessage moves a cut before "@name" back one character, never into a surrogate pair', () => {
  expect(splitMessage('abcd@efgh', 4)).toEqual(['abc', 'd@ef', 'gh']);
  expect(splitMessage('a\u{1F600}@bob', 3)).toEqual(['a', '\u{1F600}@', 'bob']);
  // An `@` with no name after it, and one already broken, are cut where they fall.
  expect(splitMessage('abcd@ x', 4)).toEqual(['abcd', '@ x']);
  expect(splitMessage('abcd@\u200bx', 4)).toEqual(['abcd', '@\u200bx']);
});
