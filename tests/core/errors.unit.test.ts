/** One table says which error codes are worth another attempt (issue 22 item 6). */
import { HookError, RETRYABLE } from '../../functions/core/errors';

test('a code in the table has its retryability whatever its thrower says', () => {
  expect(new HookError('unavailable', 'queue down', { retryable: false }).retryable).toBe(true);
  expect(new HookError('store_unavailable', 'db locked').retryable).toBe(true);
  expect(new HookError('queue_rejected', 'message refused', { retryable: true }).retryable).toBe(false);
  expect(new HookError('subscription_not_found', 'gone', { retryable: true }).retryable).toBe(false);
  expect(new HookError('agent_reply_empty', 'empty').retryable).toBe(false);
});

test('other codes say it themselves, permanent by default', () => {
  expect(new HookError('tool_http_error', '502', { retryable: true }).retryable).toBe(true);
  expect(new HookError('tool_http_error', '404').retryable).toBe(false);
  expect(Object.entries(RETRYABLE).filter(([, retry]) => retry).map(([code]) => code)).toContain('provider_rate_limited');
});
