/**
 * GitHub App identity against a local GitHub API: the App's JWT (RS256, verified here
 * with the public key) is exchanged for an installation token once, reused until shortly
 * before it expires, and sent only to api_url; config and loop-guard sides too.
 */
import { createVerify, generateKeyPairSync } from 'node:crypto';
import type { Config } from '../../functions/core/config/types';
import { clearInstallationTokens } from '../../functions/core/delivery/github-app';
import { findingBody } from '../../functions/core/delivery/findings';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { causedByHookagent } from '../../functions/core/events/loop-guard';
import { parseConfig } from '../../functions/core/config/load';
import { silentLogger } from '../../functions/core/log';
import { startFakeCodehost, type FakeCodehost } from '../support/fake-codehost';
import { sendJson } from '../support/local-http';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PEM = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
let host: FakeCodehost;
let exchanges: Array<{ iss: string; installation: string }> = [];
/** How long the next tokens live; then an hour, as GitHub's do. */
let expiresInMs: number[] = [];

beforeAll(async () => {
  host = await startFakeCodehost();
});
afterAll(async () => host.close());
beforeEach(() => {
  clearInstallationTokens();
  exchanges = [];
  expiresInMs = [];
  host.comments.clear();
  host.server.requests.length = 0;
  host.extra = (req, res, url) => {
    const m = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(url.pathname);
    if (m && req.method === 'POST') {
      const [header, payload, signature] = String(req.headers.authorization).replace(/^bearer /i, '').split('.');
      const valid = createVerify('RSA-SHA256').update(`${header}.${payload}`).verify(publicKey, Buffer.from(signature!, 'base64url'));
      const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as { iss: string; iat: number; exp: number };
      if (!valid || claims.exp - claims.iat > 600) return sendJson(res, 401, { message: 'A JSON web token could not be decoded' }), true;
      exchanges.push({ iss: claims.iss, installation: m[1]! });
      sendJson(res, 201, { token: `ghs_installation_${exchanges.length}`, expires_at: new Date(Date.now() + (expiresInMs.shift() ?? 3_600_000)).toISOString(), permissions: { pull_requests: 'write' } });
      return true;
    }
    if (!/^(token|bearer) ghs_installation_/i.test(req.headers.authorization ?? '')) return sendJson(res, 401, { message: 'Bad credentials' }), true;
    return false;
  };
});

const settings = (): Config['delivery'] => ({ timeout_ms: 1000, codehost: { github: { token: '', api_url: host.url, app: { app_id: '12345', private_key: PEM } } } });
const event = (eventId: string, installation?: number): DeliveryRequest => ({
  subscription: { name: 'review', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x', comment_mode: 'new' },
  message: { v: 1, event_id: eventId, subscription: 'review', source: 'github', event: 'issues', delivery_id: 'd', received_at: '' },
  payload: { action: 'opened', repository: { full_name: 'octo/widgets' }, issue: { number: 3 }, ...(installation ? { installation: { id: installation } } : {}) },
  reply: 'Triaged.', settings: settings(), logger: silentLogger,
});
const deliver = (r: DeliveryRequest) => createDeliveryTargets(settings(), async () => {}).codehost_comment.deliver(r);

test('the JWT is exchanged for an installation token once and the token is reused', async () => {
  expect(await deliver(event('evt_1', 42))).toMatchObject({ status: 'delivered' });
  expect(await deliver(event('evt_2', 42))).toMatchObject({ status: 'delivered' });
  expect(exchanges).toEqual([{ iss: '12345', installation: '42' }]);
  expect(host.comments.get('/repos/octo/widgets/issues/3')).toHaveLength(2);
  const used = host.server.requests.filter((r) => r.url.startsWith('/repos/')).map((r) => r.headers.authorization);
  expect(new Set(used)).toEqual(new Set(['token ghs_installation_1']));
});

test('a token close to expiry is renewed before it is used again; each installation has its own token', async () => {
  expiresInMs = [4 * 60_000]; // the first token is inside the 5-minute refresh margin
  await deliver(event('evt_1', 42));
  await deliver(event('evt_2', 42));
  await deliver(event('evt_3', 77));
  expect(exchanges.map((e) => e.installation)).toEqual(['42', '42', '77']);
  const used = host.server.requests.filter((r) => r.url.startsWith('/repos/')).map((r) => r.headers.authorization);
  // The near-expiry token served only the request it was fetched for; its replacement served installation 42 after that.
  expect([...new Set(used)]).toEqual(['token ghs_installation_1', 'token ghs_installation_2', 'token ghs_installation_3']);
  expect(used.filter((u) => u === 'token ghs_installation_1')).toHaveLength(1);
});

test('an event without installation.id (and no token configured) is a recorded failure, no request', async () => {
  expect(await deliver(event('evt_1'))).toMatchObject({ status: 'failed', retryable: false, code: 'github_app_no_installation' });
  expect(host.server.requests).toHaveLength(0);
});

test('a private key that is not a PEM is a permanent failure naming the key, not a crash', async () => {
  const bad = settings();
  bad.codehost.github!.app!.private_key = 'not a key';
  const outcome = await createDeliveryTargets(bad, async () => {}).codehost_comment.deliver({ ...event('evt_1', 42), settings: bad });
  expect(outcome).toMatchObject({ status: 'failed', retryable: false, code: 'github_app_key', message: expect.stringContaining('private_key') });
});

test('config: delivery.codehost.github.app with a ${VAR} private key; a literal key is refused; token or app is required', () => {
  const ok = parseConfig('delivery:\n  codehost:\n    github:\n      app: { app_id: 12345, private_key: ${GITHUB_APP_PRIVATE_KEY} }\n');
  expect(ok.ok && ok.value.delivery.codehost.github).toEqual({ token: '', api_url: 'https://api.github.com', app: { app_id: '12345', private_key: '${GITHUB_APP_PRIVATE_KEY}' } });
  const literal = parseConfig('delivery:\n  codehost:\n    github:\n      app: { app_id: 1, private_key: "-----BEGIN RSA PRIVATE KEY-----" }\n');
  expect(!literal.ok && literal.error.message).toContain('delivery.codehost.github.app.private_key: inline secrets are not allowed; write ${GITHUB_APP_PRIVATE_KEY}');
  const neither = parseConfig('delivery:\n  codehost:\n    github: { api_url: "https://ghe.example.com/api/v3" }\n');
  expect(!neither.ok && neither.error.message).toContain('delivery.codehost.github: needs token');
});

test('the loop guard recognises the bot\'s inline review comments and review bodies', () => {
  expect(causedByHookagent({ comment: { body: findingBody('review', { path: 'a.ts', line: 1, side: 'RIGHT', severity: 'nit', body: 'x' }) } })).toBe(true);
  // A comment posted before finding markers carried a hash.
  expect(causedByHookagent({ comment: { body: `**nit**: x\n\n<!-- hookagent-finding:review:RIGHT:1:${Buffer.from('a.ts').toString('base64')} -->` } })).toBe(true);
  expect(causedByHookagent({ review: { body: 'hookagent: 2 finding(s)\n\n<!-- hookagent:review:evt_1 -->' } })).toBe(true);
  expect(causedByHookagent({ comment: { body: 'a human comment' } })).toBe(false);
});

test('the agent\'s tools act as the App too, sharing the cached installation token', async () => {
  const { BUILTIN_TOOLS } = await import('../../functions/core/agent/tools');
  host.files = [{ filename: 'a.ts', status: 'added', additions: 1, deletions: 0 }];
  const context = {
    message: { v: 1 as const, event_id: 'e', subscription: 'review', source: 'github' as const, event: 'pull_request', delivery_id: 'd', received_at: '' },
    payload: { repository: { full_name: 'octo/widgets' }, pull_request: { number: 5 }, installation: { id: 42 } },
    delivery: settings(), signal: AbortSignal.timeout(2000),
  };
  expect(await BUILTIN_TOOLS.list_changed_files!.run({}, context)).toBe('added a.ts (+1 -0)');
  await deliver(event('evt_1', 42));
  expect(exchanges).toHaveLength(1);
});
