/**
 * Slack shows only the label of `<url|label>`: a label that contains an address on another
 * host than the link's is shown as text with the real link after it, wherever the address
 * sits in the label (after an invisible format character such as U+200B or U+2060, in `<…>`,
 * in emphasis or brackets, after other words). Against a local incoming webhook.
 */
import type { Config } from '../../functions/core/config/types';
import { markdownToMrkdwn } from '../../functions/core/delivery/mrkdwn';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import { startLocalServer, type LocalServer } from '../support/local-http';

let hook: LocalServer;
beforeAll(async () => {
  hook = await startLocalServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
});
afterAll(async () => hook.close());
beforeEach(() => void (hook.requests.length = 0));

function request(reply: string, settings: Config['delivery']): DeliveryRequest {
  return {
    subscription: { name: 'notify', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x' },
    message: { v: 1, event_id: 'evt_s', subscription: 'notify', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '' },
    payload: {}, reply, settings, logger: jsonLogger(() => {}),
  };
}

async function posted(reply: string): Promise<string> {
  const settings: Config['delivery'] = { timeout_ms: 500, codehost: {}, teamchat: { provider: 'slack', webhook_url: `${hook.url}/services/T/B/X`, api_url: 'unused' } };
  expect(await createDeliveryTargets(settings, async () => {}).teamchat.deliver(request(reply, settings))).toMatchObject({ status: 'delivered' });
  return (JSON.parse(hook.requests[0]!.body) as { text: string }).text;
}

test.each([
  ['a zero-width space before the address', '[\u200bhttps://github.com/octo/app/pull/7](https://evil.example/login)'],
  ['a word joiner before the address', '[\u2060https://github.com/octo/app/pull/7](https://evil.example/login)'],
  ['the address in angle brackets', 'Approve at [<https://github.com/octo/app/pull/7>](https://evil.example/login)'],
  ['a soft hyphen and a bidi mark before the address', '[\u00ad\u200ehttps://github.com/octo/app/pull/7](https://evil.example/login)'],
  ['the address in emphasis', '[**https://github.com/octo/app/pull/7**](https://evil.example/login)'],
  ['the address in parentheses', '[(github.com/octo/app/pull/7)](https://evil.example/login)'],
  ['the address after other words', '[review it at www.github.com](https://evil.example/login)'],
  ['a second address on another host', '[https://evil.example/a or https://github.com/octo/app](https://evil.example/login)'],
  ['an invisible character inside the address', '[https://git\u200bhub.com/octo/app/pull/7](https://evil.example/login)'],
  ['a character glued before the scheme', '[1https://github.com/octo/app/pull/7](https://evil.example/login)'],
  ['full-width colon and slashes', '[https\uff1a\uff0f\uff0fgithub.com/octo/app/pull/7](https://evil.example/login)'],
])('a label that shows another address (%s) is not a link to evil.example', async (_name, reply) => {
  const text = await posted(reply);
  // The label is shown as text and the real link follows it, as for a plain address label.
  expect(text).not.toMatch(/<https:\/\/evil\.example\/login\|/);
  expect(text).toContain('(<https://evil.example/login>)');
});

test('labels without an address, and addresses on the link\'s own host however wrapped, stay links', async () => {
  expect(await posted('[the run](https://ci.example/r/1), [app.ts](https://github.com/o/r/blob/main/app.ts), [v1.2](https://github.com/o/r/releases/tag/v1.2)'))
    .toBe('<https://ci.example/r/1|the run>, <https://github.com/o/r/blob/main/app.ts|app.ts>, <https://github.com/o/r/releases/tag/v1.2|v1.2>');
  hook.requests.length = 0;
  expect(await posted('[\u200b<https://github.com/o/r/tree/release.next/x>](https://github.com/o/r/tree/release.next/x)'))
    .toBe('<https://github.com/o/r/tree/release.next/x|\u200b&lt;https://github.com/o/r/tree/release.next/x&gt;>');
  hook.requests.length = 0;
  expect(await posted('[see **github.com/o/r/pull/1**](https://github.com/o/r/pull/1)')).toBe('<https://github.com/o/r/pull/1|see **github.com/o/r/pull/1**>');
});

test('a long label is read in one pass (no match is tried from every character)', () => {
  // Over Slack's text limit, so converted directly: the conversion runs before the cut.
  const label = `${'a1.b'.repeat(100_000)} https://github.com/octo/app`;
  expect(markdownToMrkdwn(`[${label}](https://evil.example/login)`)).toBe(`${label} (<https://evil.example/login>)`);
});
