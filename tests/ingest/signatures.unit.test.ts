/** The authentication schemes of DESIGN §2.2, scheme by scheme. */
import { authenticate } from '../../functions/core/auth/authenticate';
import {
  basicPassword, bearerToken, signHub, signStandardWebhooks, standardWebhooksKey, verifyHexHmacList, verifyHubSignature,
  verifyStandardWebhooks, verifyToken,
} from '../../functions/core/auth/signatures';
import { classifyEvent, gitlabKindFromHeader } from '../../functions/core/events/classify';
import { eventMatches, filterMatches } from '../../functions/core/events/filters';

const body = Buffer.from('{"a":1}');
const NOW = Date.parse('2026-11-22T12:00:00Z');
const ts = Math.floor(NOW / 1000);

describe('X-Hub-Signature-256', () => {
  test('valid, any secret of a rotation list; upper-case hex accepted', () => {
    expect(verifyHubSignature(body, signHub(body, 's1'), ['s0', 's1'])).toBe(true);
    expect(verifyHubSignature(body, signHub(body, 's1').toUpperCase().replace('SHA256=', 'sha256='), ['s1'])).toBe(true);
  });
  test.each([
    ['no prefix', signHub(body, 's').slice(7)],
    ['sha1 prefix', signHub(body, 's').replace('sha256', 'sha1')],
    ['truncated', signHub(body, 's').slice(0, 40)],
    ['empty', ''],
    ['not hex', `sha256=${'z'.repeat(64)}`],
  ])('%s → invalid', (_n, header) => {
    expect(verifyHubSignature(body, header, ['s'])).toBe(false);
  });
  test('no secrets configured → invalid (fail closed)', () => {
    expect(verifyHubSignature(body, signHub(body, ''), [])).toBe(false);
  });
});

describe('Standard Webhooks', () => {
  const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
  const headers = (sig: string, stamp = ts, id = 'msg_1') => ({ 'webhook-id': id, 'webhook-timestamp': String(stamp), 'webhook-signature': sig });

  test('whsec_ secrets are base64-decoded to form the key; others are used as UTF-8', () => {
    expect(standardWebhooksKey(secret).toString()).toBe('0123456789abcdef0123456789abcdef');
    expect(standardWebhooksKey('plain').toString()).toBe('plain');
  });
  test('valid within ±300 s; stale beyond', () => {
    expect(verifyStandardWebhooks(body, headers(signStandardWebhooks(body, secret, 'msg_1', ts - 300), ts - 300), [secret], NOW)).toBe('valid');
    expect(verifyStandardWebhooks(body, headers(signStandardWebhooks(body, secret, 'msg_1', ts + 300), ts + 300), [secret], NOW)).toBe('valid');
    expect(verifyStandardWebhooks(body, headers(signStandardWebhooks(body, secret, 'msg_1', ts - 301), ts - 301), [secret], NOW)).toBe('stale');
    expect(verifyStandardWebhooks(body, headers(signStandardWebhooks(body, secret, 'msg_1', ts + 301), ts + 301), [secret], NOW)).toBe('stale');
  });
  test('the id is part of what is signed', () => {
    expect(verifyStandardWebhooks(body, headers(signStandardWebhooks(body, secret, 'msg_1', ts), ts, 'msg_2'), [secret], NOW)).toBe('invalid');
  });
  test('missing headers, junk timestamps and junk signatures', () => {
    expect(verifyStandardWebhooks(body, {}, [secret], NOW)).toBe('missing');
    expect(verifyStandardWebhooks(body, headers('v1,abc', Number.NaN), [secret], NOW)).toBe('invalid');
    expect(verifyStandardWebhooks(body, headers('v1a,xyz'), [secret], NOW)).toBe('invalid');
    expect(verifyStandardWebhooks(body, headers('v1,!!!'), [secret], NOW)).toBe('invalid');
  });
});

describe('tokens', () => {
  test('whole-token compare, rotation lists, Bearer and Basic parsing', () => {
    expect(verifyToken('abc', ['x', 'abc'])).toBe(true);
    expect(verifyToken('abcd', ['abc'])).toBe(false);
    expect(verifyToken('', ['abc'])).toBe(false);
    expect(verifyToken('abc', [])).toBe(false);
    expect(bearerToken('Bearer  tok ')).toBe('tok');
    expect(bearerToken('Token tok')).toBeUndefined();
    expect(basicPassword(`Basic ${Buffer.from('user:pa:ss').toString('base64')}`)).toBe('pa:ss');
    expect(basicPassword('Basic !!!')).toBeUndefined();
  });
  test('PagerDuty v1= lists and Grafana bare hex', () => {
    const hex = signHub(body, 'k').slice(7);
    expect(verifyHexHmacList(body, `v1=${'0'.repeat(64)},v1=${hex}`, ['k'], 'v1=')).toBe(true);
    expect(verifyHexHmacList(body, hex, ['k'], '')).toBe(true);
    expect(verifyHexHmacList(body, `v1=${hex}`, ['other'], 'v1=')).toBe(false);
  });
});

describe('authenticate per endpoint', () => {
  test('GitHub accepts only X-Hub-Signature-256', () => {
    expect(authenticate('github', body, { 'x-hub-signature-256': signHub(body, 's') }, ['s'], NOW)).toEqual({ ok: true, scheme: 'hub-signature' });
    expect(authenticate('github', body, { authorization: 'Bearer s' }, ['s'], NOW).ok).toBe(false);
  });
  test('GitLab accepts its token or signed webhooks; a valid token with a bad signature still passes (migration)', () => {
    expect(authenticate('gitlab', body, { 'x-gitlab-token': 's' }, ['s'], NOW)).toEqual({ ok: true, scheme: 'gitlab-token' });
    expect(authenticate('gitlab', body, { 'x-gitlab-token': 's', 'webhook-id': 'i', 'webhook-timestamp': String(ts), 'webhook-signature': 'v1,AAAA' }, ['s'], NOW).ok).toBe(true);
    expect(authenticate('gitlab', body, { authorization: 'Bearer s' }, ['s'], NOW).ok).toBe(false);
  });
  test('a stale Standard Webhooks timestamp is refused even when a Bearer token would pass', () => {
    const sig = signStandardWebhooks(body, 's', 'i', ts - 400);
    const outcome = authenticate('custom', body, { 'webhook-id': 'i', 'webhook-timestamp': String(ts - 400), 'webhook-signature': sig, authorization: 'Bearer s' }, ['s'], NOW);
    expect(outcome).toEqual({ ok: false, reason: 'webhook-timestamp is more than 5 minutes from now' });
  });
  test('nothing configured fails closed', () => {
    expect(authenticate('custom', body, { authorization: 'Bearer ' }, [], NOW).ok).toBe(false);
  });
});

describe('event classification and filters', () => {
  test('GitLab header fallback', () => {
    expect(gitlabKindFromHeader('Merge Request Hook')).toBe('merge_request');
    expect(gitlabKindFromHeader('Job Hook')).toBe('build');
    expect(gitlabKindFromHeader('Confidential Note Hook')).toBe('note');
    expect(gitlabKindFromHeader('Tag Push Hook')).toBe('tag_push');
    expect(gitlabKindFromHeader('Wiki Page Hook')).toBe('wiki_page');
    expect(gitlabKindFromHeader(undefined)).toBeUndefined();
    // Only values GitLab sends.
    expect(gitlabKindFromHeader('hello')).toBeUndefined();
    expect(gitlabKindFromHeader('Not A Real Hook')).toBeUndefined();
  });
  test('GitLab delivery id: the signed webhook-id, else Idempotency-Key, else X-Gitlab-Event-UUID; never an unsigned webhook-id', () => {
    const kind = { object_kind: 'push' };
    expect(classifyEvent('gitlab', { 'webhook-id': 'w', 'webhook-signature': 'v1,x', 'idempotency-key': 'i' }, kind, true)?.deliveryId).toBe('w');
    // A signature header that did not verify (the request passed on its token) vouches for nothing.
    expect(classifyEvent('gitlab', { 'webhook-id': 'w', 'webhook-signature': 'v1,x', 'x-gitlab-event-uuid': 'u' }, kind, false)?.deliveryId).toBe('u');
    expect(classifyEvent('gitlab', { 'webhook-id': 'w', 'idempotency-key': 'i', 'x-gitlab-event-uuid': 'u' }, kind)?.deliveryId).toBe('i');
    expect(classifyEvent('gitlab', { 'webhook-id': 'w', 'x-gitlab-event-uuid': 'u' }, kind)?.deliveryId).toBe('u');
    expect(classifyEvent('gitlab', { 'webhook-id': 'w' }, kind)?.deliveryId).toBeUndefined();
  });
  test('odd event types are refused; long delivery ids are hashed', () => {
    expect(classifyEvent('github', { 'x-github-event': 'bad event\n' }, {})).toBeUndefined();
    expect(classifyEvent('custom', { 'x-request-id': 'x'.repeat(500) }, {})?.deliveryId).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(classifyEvent('custom', {}, { type: 42 })?.event).toBe('custom');
  });
  test('filters: name matches every action, name.action one action, empty list everything', () => {
    expect(filterMatches('pull_request', 'pull_request', 'closed')).toBe(true);
    expect(filterMatches('pull_request.opened', 'pull_request', 'opened')).toBe(true);
    expect(filterMatches('pull_request.opened', 'pull_request', 'closed')).toBe(false);
    expect(filterMatches('pull_request.opened', 'pull_request', undefined)).toBe(false);
    expect(filterMatches('pull_request', 'pull_request_review', 'submitted')).toBe(false);
    expect(eventMatches([], 'anything', undefined)).toBe(true);
  });
});
