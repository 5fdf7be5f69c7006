/**
 * Hunt 9 D3: a delivery URL that does not parse (a Slack webhook URL without its scheme)
 * makes fetch throw `TypeError: Invalid URL` before any connection: nothing was sent, and
 * trying again cannot help. It is a permanent configuration failure, not "the connection
 * failed once the message may have been sent" with a retry cycle; the URL is not echoed.
 */
import { deliveryRequest } from '../../functions/core/delivery/http';

test.each([true, false])('an unparsable URL is a permanent config_invalid failure (postsOnce %p)', async (postsOnce) => {
  let slept = 0;
  const result = await deliveryRequest('hooks.slack.com/services/T0/B0/secretpart', { method: 'POST', body: '{}' }, {
    api: 'Slack', timeoutMs: 1000, postsOnce, sleep: async () => { slept += 1; },
  });
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.failure).toMatchObject({ retryable: false, code: 'config_invalid' });
  expect(result.failure.message).toContain('Slack: its URL is not a valid http(s) URL, so nothing was sent');
  expect(result.failure.message).not.toContain('secretpart');
  expect(slept).toBe(0);
});
