/**
 * The GitHub transport over days: plugin-throttling's write, notifications and search
 * groups are made once per process and write interval, and shared by every Octokit
 * instance (plugin-throttling keys their limiters by the instance's throttle id), so an
 * instance made and dropped leaves no Bottleneck group, and no group's cleanup interval,
 * behind; the instance cache is LRU and bounded. Structural checks (timers started,
 * instances kept), no heap measurements: they do not depend on timing or on the GC.
 */
import { clearGithubClients, githubOctokit } from '../../functions/core/delivery/github-octokit';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

const HOSTED = 'https://api.github.com';
const MAX_INSTANCES = 64;
/** An App whose key is never used: no request is made through its instances here. */
const app = { app_id: '42', private_key: 'not-a-key' };

let api: LocalServer;
beforeAll(async () => {
  api = await startLocalServer((req, res) => (req.method === 'GET' ? sendJson(res, 200, { total_count: 0, items: [] }) : sendJson(res, 201, { id: 1 })));
});
afterAll(async () => api.close());
beforeEach(() => {
  api.requests.length = 0;
  clearGithubClients();
});
afterEach(() => jest.restoreAllMocks());

/** The intervals (Bottleneck.Group's idle-limiter cleanup, among others) `make` starts. */
function intervalsStartedBy(make: () => void): number {
  const spy = jest.spyOn(global, 'setInterval');
  make();
  const started = spy.mock.calls.length;
  spy.mockRestore();
  return started;
}

test('instances for 3,000 token identities start no timer of their own: at most the three shared groups, once', () => {
  const first = intervalsStartedBy(() => {
    for (let i = 0; i < 3000; i++) githubOctokit(HOSTED, { token: `token-${i}` });
  });
  expect(first).toBeLessThanOrEqual(3);
  // Dropped instances and a clearGithubClients() do not make the groups again.
  clearGithubClients();
  expect(intervalsStartedBy(() => {
    for (let i = 0; i < 3000; i++) githubOctokit(HOSTED, { token: `again-${i}` });
  })).toBe(0);
});

test('a GitHub App on 65 installations, 3,000 events round-robin: no timer per event, one set of groups per write interval', () => {
  const started = intervalsStartedBy(() => {
    for (let event = 0; event < 3000; event++) githubOctokit(api.url, { app, installationId: 1000 + (event % 65) }, 0);
    for (let event = 0; event < 3000; event++) githubOctokit(HOSTED, { app, installationId: 1000 + (event % 65) });
  });
  // Two write intervals (0 and 1000): at most two sets of three groups, whatever the number of instances made.
  expect(started).toBeLessThanOrEqual(6);
});

test('the instance cache is LRU: an installation with an event between every other one\'s keeps its instance', () => {
  const busy = githubOctokit(HOSTED, { app, installationId: 1 });
  for (let i = 0; i < 3 * MAX_INSTANCES; i++) {
    githubOctokit(HOSTED, { app, installationId: 100 + i });
    expect(githubOctokit(HOSTED, { app, installationId: 1 })).toBe(busy);
  }
});

test('bounded: the identity past MAX_INSTANCES evicts the least recently used one, not the oldest', () => {
  const made = Array.from({ length: MAX_INSTANCES }, (_, i) => githubOctokit(HOSTED, { token: `token-${i}` }));
  expect(githubOctokit(HOSTED, { token: 'token-0' })).toBe(made[0]);
  githubOctokit(HOSTED, { token: 'token-new' });
  expect(githubOctokit(HOSTED, { token: 'token-0' })).toBe(made[0]);
  expect(githubOctokit(HOSTED, { token: 'token-2' })).toBe(made[2]);
  // token-1 was the least recently used: evicted, made anew.
  expect(githubOctokit(HOSTED, { token: 'token-1' })).not.toBe(made[1]);
});

test('the shared groups still space each identity on its own: a write and a search through one token do not wait for another token\'s', async () => {
  // A minute between writes (two between searches): a second identity waiting on the first's would time the test out.
  const interval = 60_000;
  const a = githubOctokit(api.url, { token: 'token-a' }, interval);
  const b = githubOctokit(api.url, { token: 'token-b' }, interval);
  await a.request('POST /repos/{owner}/{repo}/issues/{n}/comments', { owner: 'o', repo: 'r', n: 1, body: 'a' });
  await a.request('GET /search/issues', { q: 'a' });
  await b.request('POST /repos/{owner}/{repo}/issues/{n}/comments', { owner: 'o', repo: 'r', n: 1, body: 'b' });
  await b.request('GET /search/issues', { q: 'b' });
  expect(api.requests.map((r) => `${r.method} ${r.headers.authorization}`)).toEqual(['POST token token-a', 'GET token token-a', 'POST token token-b', 'GET token token-b']);
});
