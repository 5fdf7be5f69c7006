/**
 * The octokit transport against local servers speaking GitHub's wire format: the guarded
 * fetch under plugin-paginate-rest and redirects (no credentials to another origin or
 * path), plugin-retry's pauses through the injected sleep and never on writes, writes
 * serialised per token by plugin-throttling (and spaced on GitHub's hosted API), network
 * errors.
 */
import type { ServerResponse } from 'node:http';
import githubExamples from '@octokit/webhooks-examples';
import type { Config } from '../../functions/core/config/types';
import { RefusedRequest } from '../../functions/core/delivery/github-fetch';
import { clearGithubClients, githubOctokit, writeIntervalFor } from '../../functions/core/delivery/github-octokit';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { silentLogger } from '../../functions/core/log';
import { sendJson, startLocalServer, type LocalServer, type Recorded } from '../support/local-http';

const TOKEN = 'ghp_OCTOKIT_SECRET';
const waits: number[] = [];
const sleep = async (ms: number) => void waits.push(ms);
let api: LocalServer;
let other: LocalServer;
let answers: Array<(url: URL, method: string) => [number, unknown, Record<string, string>?] | undefined> = [];
/** Scripted answers first, then an empty list for reads and a created comment for writes. */
const respond = (req: Recorded, res: ServerResponse) => {
  const url = new URL(req.url, api.url);
  const scripted = answers.shift()?.(url, req.method);
  if (scripted) return sendJson(res, ...scripted);
  if (req.method === 'GET') return sendJson(res, 200, []);
  sendJson(res, 201, { id: api.requests.length, html_url: `https://github.test/c/${api.requests.length}` });
};

beforeAll(async () => {
  other = await startLocalServer((_req, res) => sendJson(res, 200, [{ id: 99, body: 'stolen' }]));
  api = await startLocalServer(respond);
});
afterAll(async () => {
  await api.close();
  await other.close();
});
beforeEach(() => {
  api.requests.length = 0;
  other.requests.length = 0;
  answers = [];
  waits.length = 0;
  clearGithubClients();
});

const pr = () => githubExamples.find((g) => g.name === 'pull_request')!.examples[0] as Record<string, unknown>;
const settings = (): Config['delivery'] => ({ timeout_ms: 1000, codehost: { github: { token: TOKEN, api_url: api.url } } });
function request(eventId: string): DeliveryRequest {
  return {
    subscription: { name: 'review', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x', comment_mode: 'new' },
    message: { v: 1, event_id: eventId, subscription: 'review', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '' },
    payload: pr(), reply: 'Reviewed.', settings: settings(), logger: silentLogger,
  };
}
const deliver = (r: DeliveryRequest) => createDeliveryTargets(r.settings, sleep).codehost_comment.deliver(r);

describe('no credentials across origins (the guarded fetch under octokit)', () => {
  test('paginate following a Link to another host is refused before anything is sent there', async () => {
    answers = [() => [200, [{ id: 1, body: 'first page' }], { link: `<${other.url}/repos/o/r/issues/1/comments?page=2>; rel="next"` }]];
    const octokit = githubOctokit(api.url, { token: TOKEN }, 0);
    const error = await octokit.paginate('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', { owner: 'o', repo: 'r', issue_number: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RefusedRequest);
    expect(error).toMatchObject({ code: 'unsafe_path', message: expect.stringContaining('another host') });
    expect(other.requests).toHaveLength(0);
    expect(api.requests).toHaveLength(1);
    expect(api.requests[0]!.headers.authorization).toBe(`token ${TOKEN}`);
  });

  test('a Link to a path outside api_url on the same host is refused too', async () => {
    const base = `${api.url}/api/v3`;
    answers = [() => [200, [{ id: 1 }], { link: `<${api.url}/admin/users?page=2>; rel="next"` }]];
    const error = await githubOctokit(base, { token: TOKEN }, 0).paginate('GET /repos/o/r/issues/1/comments').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unsafe_path', message: expect.stringContaining('outside api_url') });
    expect(api.requests.map((r) => r.url)).toEqual(['/api/v3/repos/o/r/issues/1/comments']);
  });

  test('a redirect is not followed, to another host or anywhere', async () => {
    answers = [() => [302, {}, { location: `${other.url}/steal` }]];
    const error = await githubOctokit(api.url, { token: TOKEN }, 0).request('GET /repos/o/r').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'redirect_refused' });
    expect(other.requests).toHaveLength(0);
    expect(api.requests).toHaveLength(1);
  });

  test('through the review tools\' client, the list stops at the foreign Link and says so', async () => {
    const { BUILTIN_TOOLS } = await import('../../functions/core/agent/tools');
    answers = [() => [200, [{ filename: 'a.ts', status: 'added', additions: 1, deletions: 0 }], { link: `<${other.url}/repos/octo/widgets/pulls/7/files?page=2>; rel="next"` }]];
    const out = await BUILTIN_TOOLS.list_changed_files!.run({}, {
      message: { v: 1, event_id: 'e', subscription: 'review', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '' },
      payload: { repository: { full_name: 'octo/widgets' }, pull_request: { number: 7 } }, delivery: settings(), signal: AbortSignal.timeout(2000), sleep,
    });
    expect(out).toContain('added a.ts');
    expect(out).toContain('another host');
    expect(other.requests).toHaveLength(0);
  });
});

describe('retries', () => {
  test('a 502 on a read is retried by plugin-retry, pausing through the injected sleep', async () => {
    answers = [() => [502, { message: 'Bad gateway' }]];
    expect(await deliver(request('evt_1'))).toMatchObject({ status: 'delivered' });
    expect(api.requests.map((r) => r.method)).toEqual(['GET', 'GET', 'POST']);
    expect(waits).toHaveLength(1);
  });

  test.each([401, 404, 410, 422])('a %i on a read is sent once: plugin-retry leaves it alone, and no waits are taken', async (status) => {
    answers = [() => [status, { message: `status ${status}` }]];
    const outcome = await deliver(request('evt_1'));
    expect(outcome).toMatchObject({ status: 'failed', retryable: false });
    expect(api.requests.map((r) => r.method)).toEqual(['GET']);
    expect(waits).toEqual([]);
  });

  test.each([
    [404, {}],
    [403, { 'retry-after': '60' }],
  ])('through the review tools\' client, a %i on a read is sent once (plugin-retry used to resend every 4xx at once)', async (status, headers) => {
    const { BUILTIN_TOOLS } = await import('../../functions/core/agent/tools');
    answers = [() => [status, { message: status === 403 ? 'You have exceeded a secondary rate limit' : 'Not Found' }, headers]];
    const out = await BUILTIN_TOOLS.get_file!.run({ path: 'src/a.ts' }, {
      message: { v: 1, event_id: 'e', subscription: 'review', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '' },
      payload: { repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha: 'a'.repeat(40) } } }, delivery: settings(), signal: AbortSignal.timeout(2000), sleep, maxWaitMs: 0,
    }).catch((error: Error) => error.message);
    expect(api.requests.map((r) => `${r.method} ${new URL(r.url, api.url).pathname}`)).toEqual(['GET /repos/octo/widgets/contents/src/a.ts']);
    expect(out).toMatch(status === 404 ? /not found|404/i : /rate limit/i);
  });

  test('through the review tools\' client, a 502 on a read is still retried, pausing through the injected sleep', async () => {
    const { BUILTIN_TOOLS } = await import('../../functions/core/agent/tools');
    answers = [() => [502, { message: 'Bad gateway' }], () => [200, { type: 'file', encoding: 'base64', content: Buffer.from('export const a = 1;\n').toString('base64') }]];
    const out = await BUILTIN_TOOLS.get_file!.run({ path: 'src/a.ts' }, {
      message: { v: 1, event_id: 'e', subscription: 'review', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '' },
      payload: { repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha: 'a'.repeat(40) } } }, delivery: settings(), signal: AbortSignal.timeout(2000), sleep,
    });
    expect(out).toContain('export const a = 1;');
    expect(api.requests.map((r) => r.method)).toEqual(['GET', 'GET']);
    expect(waits).toHaveLength(1);
  });

  test('a 502 on a write is not retried blindly: the marker is searched before the next attempt', async () => {
    answers = [() => undefined, (_u, method) => (method === 'POST' ? [502, { message: 'Bad gateway' }] : undefined)];
    expect(await deliver(request('evt_1'))).toMatchObject({ status: 'delivered' });
    expect(api.requests.map((r) => r.method)).toEqual(['GET', 'POST', 'GET', 'POST']);
  });

  test('an unreachable GitHub is a retryable network_error after three attempts, naming no URL', async () => {
    const gone = await startLocalServer(() => undefined);
    await gone.close();
    const r = request('evt_1');
    r.settings.codehost.github!.api_url = gone.url;
    const outcome = await deliver(r);
    expect(outcome).toMatchObject({ status: 'failed', retryable: true, code: 'network_error' });
    expect(JSON.stringify(outcome)).not.toContain(gone.url);
    expect(waits.length).toBeGreaterThanOrEqual(2);
  });
});

describe('writes through one token are serialised', () => {
  test('the second write is sent only after the first is answered', async () => {
    const log: string[] = [];
    api.respond = (req, res) => {
      log.push(`sent ${req.url}`);
      setTimeout(() => {
        log.push(`answered ${req.url}`);
        sendJson(res, 201, { id: 1 });
      }, 50);
    };
    try {
      const octokit = githubOctokit(api.url, { token: TOKEN });
      await Promise.all([1, 2].map((n) => octokit.request('POST /repos/o/r/issues/{n}/comments', { n, body: 'x' })));
      expect(log).toEqual(['sent /repos/o/r/issues/1/comments', 'answered /repos/o/r/issues/1/comments', 'sent /repos/o/r/issues/2/comments', 'answered /repos/o/r/issues/2/comments']);
    } finally {
      api.respond = respond;
    }
  });

  test('and spaced by the write interval (plugin-throttling)', async () => {
    const octokit = githubOctokit(api.url, { token: TOKEN }, 150);
    const at: number[] = [];
    answers = [1, 2].map(() => () => void at.push(Date.now()));
    await Promise.all([1, 2].map((n) => octokit.request('PATCH /repos/o/r/issues/comments/{n}', { n, body: 'x' })));
    expect(at).toHaveLength(2);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(140);
  });

  test('one Octokit per token or App installation: the same one again, a new one after a rotation', () => {
    const app = (key: string, installationId = 1) => ({ app: { app_id: '7', private_key: key }, installationId });
    expect(githubOctokit(api.url, { token: TOKEN })).toBe(githubOctokit(api.url, { token: TOKEN }));
    expect(githubOctokit(api.url, { token: TOKEN })).not.toBe(githubOctokit(api.url, { token: `${TOKEN}2` }));
    expect(githubOctokit(api.url, app('key-a'))).toBe(githubOctokit(api.url, app('key-a')));
    expect(githubOctokit(api.url, app('key-a'))).not.toBe(githubOctokit(api.url, app('key-b')));
    expect(githubOctokit(api.url, app('key-a'))).not.toBe(githubOctokit(api.url, app('key-a', 2)));
  });

  test('a second apart on GitHub\'s hosted API; not paused on GitHub Enterprise Server or a local double', () => {
    expect(writeIntervalFor('https://api.github.com')).toBe(1000);
    expect(writeIntervalFor('https://api.octocorp.ghe.com')).toBe(1000);
    expect(writeIntervalFor('https://github.example.com/api/v3')).toBe(0);
    expect(writeIntervalFor(api.url)).toBe(0);
  });
});
