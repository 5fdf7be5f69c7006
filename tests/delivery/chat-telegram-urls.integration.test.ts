/**
 * Hunt 12 (chat) fix, Telegram: a mention is broken with a zero-width space after its `@`,
 * but not inside a URL Telegram links from before it (tdlib find_entities: the URL starts
 * first and the mention inside it is dropped as intersecting; tdlib's is_url_unicode_symbol
 * takes no U+200B, so a space there ended the link at `…/package/@`). Wherever Telegram would
 * still make a mention, the space stays. Replies go to a local Telegram Bot API server.
 *
 * The tests through `.messenger` need /work/prof/chat12-references.patch (references.ts,
 * breakPlainMentions) applied; telegramUrlAts (links.ts) is checked on its own too.
 */
import { telegramUrlAts } from '../../functions/core/delivery/links';
import { TELEGRAM_TEXT_LIMIT } from '../../functions/core/delivery/telegram';
import { useTelegramSent } from '../support/telegram-sent';

/** The texts of the messages Telegram receives for `reply`, in order. */
const sent = useTelegramSent();

describe('a URL Telegram links whole reaches it as written', () => {
  test.each([
    ['an npm scoped package', 'Bump https://www.npmjs.com/package/@types/node to 20.x'],
    ['a Medium profile', 'Author: https://medium.com/@alice/why-x-1234'],
    ['in parentheses', 'Docs (https://medium.com/@alice/why-x-1234).'],
    ['in a query', 'See https://x.example/search?user=@alice#top'],
    ['a Mastodon profile without a scheme', 'Follow mastodon.social/@alice'],
    ['two in one URL, on a second line', 'intro\nhttps://registry.example.org/@scope/pkg/@latest'],
  ])('%s', async (_name, reply) => {
    expect(await sent(reply)).toEqual([reply]);
  });
});

describe('wherever Telegram makes a mention, it gets the zero-width space', () => {
  test.each([
    ['a plain mention', 'cc @alice', 'cc @\u200balice'],
    ['after a URL, past a space', 'https://x.example/a @alice', 'https://x.example/a @\u200balice'],
    ['a host of one label: no URL', 'http://localhost/@alice', 'http://localhost/@\u200balice'],
    ['an unbalanced ) ends the path first', 'https://x.example/a)/@alice', 'https://x.example/a)/@\u200balice'],
    ['" ends the path', 'https://x.example/a"@alice', 'https://x.example/a"@\u200balice'],
    ['an underscore in the host: no URL', 'https://x_y.example/@alice', 'https://x_y.example/@\u200balice'],
    ['no scheme and an uncommon top-level domain', 'example.zzz/@alice', 'example.zzz/@\u200balice'],
    ['no scheme and a capitalised top-level domain', 'example.Com/@alice', 'example.Com/@\u200balice'],
    // tdlib: the first URL's path runs over the tab and is cut at the `)`; the second URL is never looked for.
    ['a URL after a tab, behind an earlier one cut short', 'x.com/)\thttps://b.example/@alice', 'x.com/)\thttps://b.example/@\u200balice'],
  ])('%s', async (_name, reply, text) => {
    expect(await sent(reply)).toEqual([text]);
  });

  test('a line Telegram gets in two parts: a part starting inside a URL has no URL, so every @ on that line gets the space', async () => {
    const url = `https://x.example/${'a'.repeat(TELEGRAM_TEXT_LIMIT - 19)}/`;
    expect(url.length).toBe(TELEGRAM_TEXT_LIMIT);
    const parts = await sent(`${url}@alice tail\nhttps://www.npmjs.com/package/@types/node`);
    expect(parts).toEqual([url, '@\u200balice tail\nhttps://www.npmjs.com/package/@types/node']);
  });
});

test('telegramUrlAts: the @s in the path of a URL Telegram links from before them', () => {
  const at = (line: string) => [...telegramUrlAts(line)].map((i) => line.slice(i, i + 3));
  expect(at('https://medium.com/@alice and https://x.example/p?u=@bob')).toEqual(['@al', '@bo']);
  expect(at('(https://x.example/(a)@cat) www.npmjs.com/package/@dan')).toEqual(['@ca', '@da']);
  expect(at('https://x.example/a}@alice https://localhost/@bob x.example.zzz/@c')).toEqual([]);
});
