/**
 * GitHub App identity against a local GitHub speaking its wire format (JWT verified with the
 * App's public key, 201 `{token, expires_at}` exchanges, 401 "Bad credentials" for a token
 * GitHub no longer accepts): a revoked installation token is replaced once, not kept until
 * it expires (hunt 12 D1); any key hookagent's check accepts signs the JWT, and a key it
 * cannot sign with is refused before any request (hunt 12 D3).
 *
 * Only `Date` is faked: @octokit/auth-app retries a 401 for 5 seconds after a token was
 * made (GitHub's replication lag), timed by the wall clock, so the tests move that clock
 * instead of waiting. Timers, sockets and fetch are real.
 */
import { createVerify, generateKeyPairSync } from 'node:crypto';
import type { Config } from '../../functions/core/config/types';
import { clearInstallationTokens, usablePrivateKey } from '../../functions/core/delivery/github-app';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { silentLogger } from '../../functions/core/log';
import { startFakeCodehost, type FakeCodehost } from '../support/fake-codehost';
import { sendJson } from '../support/local-http';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PKCS1 = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
const PKCS8 = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
/** What `openssl pkcs12 -nodes` writes before the key: node:crypto reads past it. */
const BAGGED = `Bag Attributes\n    localKeyID: 01 00 00 00\n    friendlyName: my-app\nKey Attributes: <No Attributes>\n${PKCS8}`;
/** Beyond auth-app's 5-second replication grace. */
const PAST_GRACE_MS = 6_000;
const THREAD = '/repos/octo/widgets/issues/3';

let host: FakeCodehost;
/** A new App per test: the process keeps one Octokit per identity, and its throttling queues remember the moved clock. */
let appId = 12345;
let issued = 0;
/** Tokens GitHub refuses; `refuseAll` refuses every installation token, those made later too (the installation's access revoked). */
const revoked = new Set<string>();
let refuseAll = false;
/** GitHub revokes this token just before the next write made with it arrives. */
let revokeOnWrite: string | undefined;

beforeAll(async () => {
  host = await startFakeCodehost();
});
afterAll(async () => host.close());
beforeEach(() => {
  const realTimers = ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] as const;
  jest.useFakeTimers({ doNotFake: [...realTimers], advanceTimers: true });
  appId += 1;
  clearInstallationTokens();
  issued = 0;
  revoked.clear();
  refuseAll = false;
  revokeOnWrite = undefined;
  host.reset();
  host.extra = (req, res, url) => {
    if (/^\/app\/installations\/42\/access_tokens$/.test(url.pathname) && req.method === 'POST') {
      const [header, payload, signature] = String(req.headers.authorization).replace(/^bearer /i, '').split('.');
      const valid = createVerify('RSA-SHA256').update(`${header}.${payload}`).verify(publicKey, Buffer.from(signature!, 'base64url'));
      if (!valid) return sendJson(res, 401, { message: 'A JSON web token could not be decoded', documentation_url: 'https://docs.github.com/rest' }), true;
      issued += 1;
      sendJson(res, 201, { token: `ghs_installation_${issued}`, expires_at: new Date(Date.now() + 3_600_000).toISOString(), permissions: { issues: 'write' }, repository_selection: 'all' });
      return true;
    }
    const token = (req.headers.authorization ?? '').replace(/^token /i, '');
    if (req.method === 'POST' && token === revokeOnWrite) revoked.add(token);
    if (!/^ghs_installation_/.test(token) || refuseAll || revoked.has(token)) {
      // Each refusal comes after auth-app's grace: its own in-place retry of a young token ends after one pause.
      if (refuseAll) jest.setSystemTime(Date.now() + PAST_GRACE_MS);
      return sendJson(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' }), true;
    }
    return false;
  };
});
afterEach(() => jest.useRealTimers());

const settings = (key: string): Config['delivery'] => ({ timeout_ms: 2000, codehost: { github: { token: '', api_url: host.url, app: { app_id: String(appId), private_key: key } } } });
const event = (eventId: string, key = PKCS1): DeliveryRequest => ({
  subscription: { name: 'triage', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x', comment_mode: 'new' },
  message: { v: 1, event_id: eventId, subscription: 'triage', source: 'github', event: 'issues', delivery_id: eventId, received_at: '' },
  payload: { action: 'opened', repository: { full_name: 'octo/widgets' }, issue: { number: 3 }, installation: { id: 42 } },
  reply: `Triaged ${eventId}.`, settings: settings(key), logger: silentLogger,
});
const deliver = (r: DeliveryRequest) => createDeliveryTargets(r.settings, async () => {}).codehost_comment.deliver(r);
const posted = () => (host.comments.get(THREAD) ?? []).map((c) => c.body.split('\n')[0]);

describe('a revoked installation token (hunt 12 D1)', () => {
  test('a token GitHub revoked (401 Bad credentials) is dropped and the delivery retried once with a fresh one; the fresh one is kept', async () => {
    expect(await deliver(event('evt_1'))).toMatchObject({ status: 'delivered' });
    // GitHub revokes the token (DELETE /installation/token, secret scanning, …) some time after it was made.
    revoked.add('ghs_installation_1');
    jest.setSystemTime(Date.now() + PAST_GRACE_MS);
    const second = await deliver(event('evt_2'));
    const third = await deliver(event('evt_3'));
    expect({ second: second.status, third: third.status, issued }).toEqual({ second: 'delivered', third: 'delivered', issued: 2 });
    // Each comment once: the refused post wrote nothing, the retry wrote it.
    expect(posted()).toEqual(['Triaged evt_1.', 'Triaged evt_2.', 'Triaged evt_3.']);
    const calls = host.server.requests.filter((r) => r.url.startsWith('/repos/')).map((r) => `${r.method} ${r.headers.authorization}`);
    expect(calls).toEqual([
      'GET token ghs_installation_1', 'POST token ghs_installation_1',
      'GET token ghs_installation_1', 'GET token ghs_installation_2', 'POST token ghs_installation_2',
      'GET token ghs_installation_2', 'POST token ghs_installation_2',
    ]);
  });

  test('a write refused with 401 is sent once more with a fresh token and posted once', async () => {
    expect(await deliver(event('evt_1'))).toMatchObject({ status: 'delivered' });
    revokeOnWrite = 'ghs_installation_1';
    jest.setSystemTime(Date.now() + PAST_GRACE_MS);
    expect(await deliver(event('evt_2'))).toMatchObject({ status: 'delivered' });
    const calls = host.server.requests.filter((r) => r.url.startsWith('/repos/')).map((r) => `${r.method} ${r.headers.authorization}`);
    expect(calls.slice(2)).toEqual(['GET token ghs_installation_1', 'POST token ghs_installation_1', 'POST token ghs_installation_2']);
    expect({ issued, posted: posted() }).toEqual({ issued: 2, posted: ['Triaged evt_1.', 'Triaged evt_2.'] });
  });

  test('when the fresh token is refused too, the delivery is a permanent http_401 after one exchange, with nothing posted', async () => {
    expect(await deliver(event('evt_1'))).toMatchObject({ status: 'delivered' });
    refuseAll = true;
    jest.setSystemTime(Date.now() + PAST_GRACE_MS);
    const outcome = await deliver(event('evt_2'));
    expect(outcome).toEqual({ status: 'failed', retryable: false, code: 'http_401', message: 'GitHub refused the delivery (401): Bad credentials' });
    expect({ issued, posted: posted() }).toEqual({ issued: 2, posted: ['Triaged evt_1.'] });
  });
});

describe('the App key (hunt 12 D3)', () => {
  test('a PKCS#8 key with the "Bag Attributes" lines openssl pkcs12 writes signs the JWT, like the PKCS#1 and plain PKCS#8 forms', async () => {
    expect(usablePrivateKey(BAGGED)).toBe(true);
    expect(await deliver(event('evt_bag', BAGGED))).toMatchObject({ status: 'delivered' });
    clearInstallationTokens();
    expect(await deliver(event('evt_p8', PKCS8))).toMatchObject({ status: 'delivered' });
    clearInstallationTokens();
    expect(await deliver(event('evt_p1', PKCS1.replace(/\n/g, '\\n')))).toMatchObject({ status: 'delivered' });
    expect(issued).toBe(3);
  });

  test('a private key RS256 cannot sign with (EC) is a permanent github_app_key failure before any request, not a retried network error', async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(usablePrivateKey(ec)).toBe(false);
    expect(await deliver(event('evt_ec', ec))).toMatchObject({ status: 'failed', retryable: false, code: 'github_app_key' });
    expect(host.server.requests).toHaveLength(0);
  });
});
