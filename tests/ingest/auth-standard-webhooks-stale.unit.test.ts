/**
 * Standard Webhooks timestamps (hunt 12 D5): a timestamp counts only when the signature
 * over it verifies. An unverifiable signature is `invalid` whatever its timestamp, so the
 * endpoint's other schemes (X-Gitlab-Token, Bearer, Basic, HMAC headers) still decide; a
 * verified signature outside ±5 minutes is `stale` and refused before them.
 */
import { authenticate } from '../../functions/core/auth/authenticate';
import { signHub, signStandardWebhooks, verifyStandardWebhooks } from '../../functions/core/auth/signatures';

const body = Buffer.from('{"a":1}');
const NOW = Date.parse('2026-11-22T12:00:00Z');
const ts = Math.floor(NOW / 1000);
const signed = (secret: string, stamp: number, id = 'msg_1') => ({ 'webhook-id': id, 'webhook-timestamp': String(stamp), 'webhook-signature': signStandardWebhooks(body, secret, id, stamp) });

describe('verifyStandardWebhooks', () => {
  test('a signature that does not verify is invalid, however far its timestamp is from now', () => {
    for (const stamp of [ts, ts - 301, ts + 301, ts - 86_400]) expect(verifyStandardWebhooks(body, signed('other', stamp), ['s'], NOW)).toBe('invalid');
  });
  test('a verified signature is stale outside ±5 minutes, valid inside', () => {
    expect(verifyStandardWebhooks(body, signed('s', ts - 301), ['s'], NOW)).toBe('stale');
    expect(verifyStandardWebhooks(body, signed('s', ts + 301), ['s', 't'], NOW)).toBe('stale');
    expect(verifyStandardWebhooks(body, signed('t', ts - 300), ['s', 't'], NOW)).toBe('valid');
  });
});

describe('authenticate with stale Standard Webhooks headers', () => {
  test('GitLab: the right X-Gitlab-Token passes beside an unverifiable stale signature', () => {
    expect(authenticate('gitlab', body, { 'x-gitlab-token': 's', ...signed('signing-token', ts - 400) }, ['s'], NOW)).toEqual({ ok: true, scheme: 'gitlab-token' });
    expect(authenticate('gitlab', body, { 'x-gitlab-token': 'x', ...signed('signing-token', ts - 400) }, ['s'], NOW)).toEqual({ ok: false, reason: 'webhook-signature does not match' });
  });
  test('custom: Bearer, Basic and X-Hub-Signature-256 pass beside an unverifiable stale signature', () => {
    const stale = signed('someone-else', ts - 400);
    expect(authenticate('custom', body, { ...stale, authorization: 'Bearer s' }, ['s'], NOW)).toEqual({ ok: true, scheme: 'bearer' });
    expect(authenticate('custom', body, { ...stale, authorization: `Basic ${Buffer.from('u:s').toString('base64')}` }, ['s'], NOW)).toEqual({ ok: true, scheme: 'basic' });
    expect(authenticate('custom', body, { ...stale, 'x-hub-signature-256': signHub(body, 's') }, ['s'], NOW)).toEqual({ ok: true, scheme: 'hub-signature' });
    expect(authenticate('custom', body, stale, ['s'], NOW)).toEqual({ ok: false, reason: 'webhook-signature does not match' });
  });
  test('a verified signature outside ±5 minutes is refused as stale, whatever else the request carries', () => {
    const reason = 'webhook-timestamp is more than 5 minutes from now';
    expect(authenticate('gitlab', body, { 'x-gitlab-token': 's', ...signed('s', ts - 400) }, ['s'], NOW)).toEqual({ ok: false, reason });
    expect(authenticate('custom', body, { ...signed('s', ts + 400), authorization: 'Bearer s' }, ['s'], NOW)).toEqual({ ok: false, reason });
  });
});
