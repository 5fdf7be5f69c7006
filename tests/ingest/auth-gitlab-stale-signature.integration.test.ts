/**
 * GitLab hooks set up with both a secret token (X-Gitlab-Token) and a signing token
 * (Standard Webhooks headers), when hookagent was given the secret token only (hunt 12 D5):
 * the signature cannot be checked, so its timestamp says nothing and the right token is
 * accepted however old that timestamp is. A signature hookagent does verify still has to
 * be within ±5 minutes. The ingest Lambda handler, API Gateway v2 events, dynalite.
 */
import { signStandardWebhooks } from '../../functions/core/auth/signatures';
import { apiEvent } from '../support/requests';
import { GITLAB_SECRET, bodyOf, startHarness, type Harness } from '../support/ingest-harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  await h.addSubscription({ name: 'mrs', events: ['gitlab:merge_request'] });
});
afterAll(async () => h.close());

const BODY = JSON.stringify({ object_kind: 'merge_request', object_attributes: { action: 'open', iid: 4 }, project: { id: 9, path_with_namespace: 'g/p' } });
/** GitLab's own signing token, which this deployment was not given. */
const UNKNOWN_SIGNING_TOKEN = `whsec_${Buffer.from('s'.repeat(32)).toString('base64')}`;

function fromGitlab(id: string, timestamp: number, options: { token?: string; signingKey?: string } = {}) {
  return apiEvent({
    path: '/webhooks/gitlab', body: BODY,
    headers: {
      'content-type': 'application/json', 'x-gitlab-event': 'Merge Request Hook',
      ...(options.token === undefined ? {} : { 'x-gitlab-token': options.token }),
      'idempotency-key': id, 'webhook-id': id, 'webhook-timestamp': String(timestamp),
      'webhook-signature': signStandardWebhooks(BODY, options.signingKey ?? UNKNOWN_SIGNING_TOKEN, id, timestamp),
    },
  });
}

test('the right X-Gitlab-Token is accepted whatever the timestamp of a signature hookagent cannot verify', async () => {
  const now = Math.floor(h.clock.now() / 1000);
  expect((await h.handler(fromGitlab('gl-fresh', now, { token: GITLAB_SECRET }))).statusCode).toBe(202);
  // GitLab's clock 6 minutes behind (a self-managed instance): same token, same hook.
  const late = await h.handler(fromGitlab('gl-late', now - 360, { token: GITLAB_SECRET }));
  expect({ status: late.statusCode, body: bodyOf(late) }).toMatchObject({ status: 202, body: { status: 'accepted' } });
  const early = await h.handler(fromGitlab('gl-early', now + 3600, { token: GITLAB_SECRET }));
  expect(early.statusCode).toBe(202);
});

test('without the right token, an unverifiable stale signature is refused; a verified one outside ±5 minutes is refused even with the right token', async () => {
  const now = Math.floor(h.clock.now() / 1000);
  const wrongToken = await h.handler(fromGitlab('gl-wrong', now - 360, { token: 'not-the-secret' }));
  expect({ status: wrongToken.statusCode, body: bodyOf(wrongToken) }).toMatchObject({ status: 401, body: { status: 'error' } });
  expect((await h.handler(fromGitlab('gl-none', now - 360))).statusCode).toBe(401);
  // Signed with the secret hookagent knows: the signature verifies, and its timestamp is 6 minutes old (a replay).
  const logged = h.logs.length;
  const replay = await h.handler(fromGitlab('gl-replay', now - 360, { token: GITLAB_SECRET, signingKey: GITLAB_SECRET }));
  expect(replay.statusCode).toBe(401);
  expect(h.logs.slice(logged).some((line) => line.includes('webhook-timestamp is more than 5 minutes from now'))).toBe(true);
  // The same signature within the window is accepted by it.
  expect((await h.handler(fromGitlab('gl-signed', now - 200, { signingKey: GITLAB_SECRET }))).statusCode).toBe(202);
});
