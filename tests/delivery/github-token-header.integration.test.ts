/**
 * A GitHub token that cannot be sent as an HTTP header (hunt 5 D3: the README's own
 * `GITHUB_TOKEN=github_pat_…`, a smart quote, a space) is a permanent configuration
 * failure naming the key, not a retryable "GitHub could not be reached": nothing is sent.
 */
import githubExamples from '@octokit/webhooks-examples';
import type { Config } from '../../functions/core/config/types';
import { clearGithubClients } from '../../functions/core/delivery/github-octokit';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { silentLogger } from '../../functions/core/log';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

let api: LocalServer;
beforeAll(async () => {
  api = await startLocalServer((req, res) => (req.method === 'GET' ? sendJson(res, 200, []) : sendJson(res, 201, { id: 1, html_url: 'https://github.test/c/1' })));
});
afterAll(async () => api.close());
beforeEach(() => {
  api.requests.length = 0;
  clearGithubClients();
});

const pr = () => githubExamples.find((g) => g.name === 'pull_request')!.examples[0] as Record<string, unknown>;
function request(token: string): DeliveryRequest {
  const settings: Config['delivery'] = { timeout_ms: 1000, codehost: { github: { token, api_url: api.url } } };
  return {
    subscription: { name: 'review', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x', comment_mode: 'new' },
    message: { v: 1, event_id: 'evt_token', subscription: 'review', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '' },
    payload: pr(), reply: 'Reviewed.', settings, logger: silentLogger,
  };
}
const deliver = (r: DeliveryRequest) => createDeliveryTargets(r.settings, async () => {}).codehost_comment.deliver(r);

test.each([
  ['github_pat_…', '"…" (U+2026) at character 12'],
  ['ghp_abc def', 'a space at character 8'],
  ['ghp_abc\n', 'a line break at character 8'],
])('token %j: a permanent config_invalid failure naming the key; nothing is sent', async (token, where) => {
  const outcome = await deliver(request(token));
  expect(outcome).toMatchObject({ status: 'failed', retryable: false, code: 'config_invalid' });
  expect((outcome as { message: string }).message).toContain(`delivery.codehost.github.token has ${where}`);
  expect((outcome as { message: string }).message).not.toContain(token.trim());
  expect(api.requests).toHaveLength(0);
});

test('a well-formed token is sent as before', async () => {
  const outcome = await deliver(request('ghp_GOOD0123456789'));
  expect(outcome).toMatchObject({ status: 'delivered' });
  expect(api.requests.find((r) => r.method === 'POST')?.headers.authorization).toBe('token ghp_GOOD0123456789');
});
