/**
 * http_get: only URLs under the operator's prefixes, GET only, redirects followed only while
 * they stay under a prefix, headers only to their prefix, size and time caps; and the
 * config keys that set it up.
 */
import { allowedEntry, httpGetTool } from '../../functions/core/agent/http-get';
import type { ToolContext } from '../../functions/core/agent/tools';
import { parseConfig, resolveConfig } from '../../functions/core/config/load';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

let prom: LocalServer;
let other: LocalServer;
beforeAll(async () => {
  other = await startLocalServer((_req, res) => sendJson(res, 200, { secret: 'must never be read' }));
  prom = await startLocalServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/api/v1/query') {
      sendJson(res, 200, { status: 'success', data: { resultType: 'vector', result: [{ metric: { instance: 'db-1' }, value: [1, '0.97'] }] } });
    } else if (url.pathname === '/api/v1/redirect-inside') {
      res.writeHead(302, { location: '/api/v1/query?query=up' });
      res.end();
    } else if (url.pathname === '/api/v1/redirect-outside') {
      res.writeHead(302, { location: `${other.url}/steal` });
      res.end();
    } else if (url.pathname === '/api/v1/redirect-up') {
      res.writeHead(301, { location: '/admin/config' });
      res.end();
    } else if (url.pathname === '/api/v1/big') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('x'.repeat(10_000));
    } else if (url.pathname === '/api/v1/slow') {
      // Never answers: the time cap ends it.
    } else {
      sendJson(res, 404, { status: 'error', error: 'not found' });
    }
  });
});
afterAll(async () => {
  await prom.close();
  await other.close();
});
beforeEach(() => {
  prom.requests.length = 0;
  other.requests.length = 0;
});

const context = (): ToolContext => ({
  message: { v: 1, event_id: 'e', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '' },
  payload: {}, delivery: { timeout_ms: 1000, codehost: {} }, signal: AbortSignal.timeout(5000),
});
const tool = (extra: { timeout_ms?: number; max_bytes?: number } = {}) => httpGetTool({
  allow: [{ prefix: `${prom.url}/api/v1/`, headers: { Authorization: 'Bearer prom-token' } }], timeout_ms: extra.timeout_ms ?? 2000, max_bytes: extra.max_bytes ?? 4096,
});

test('a Prometheus query under the prefix is read with the prefix headers, by GET', async () => {
  const out = await tool().run({ url: `${prom.url}/api/v1/query?query=${encodeURIComponent('node_filesystem_avail_bytes{instance="db-1"}')}` }, context());
  expect(out).toMatch(/^HTTP 200 application\/json\n/);
  expect(out).toContain('"instance":"db-1"');
  expect(prom.requests[0]).toMatchObject({ method: 'GET', headers: expect.objectContaining({ authorization: 'Bearer prom-token' }) });
});

test.each([
  ['another host', () => `${other.url}/api/v1/query`],
  ['the same host outside the path', () => `${prom.url}/admin/config`],
  ['a dot-segment escape', () => `${prom.url}/api/v1/../../admin`],
  ['an encoded dot-segment escape', () => `${prom.url}/api/v1/%2e%2e/%2E%2E/admin`],
  ['userinfo', () => prom.url.replace('http://', 'http://user:pw@') + '/api/v1/query'],
  ['a file URL', () => 'file:///etc/passwd'],
  ['not a URL', () => 'api/v1/query'],
])('refuses %s, calling nothing', async (_what, url) => {
  await expect(tool().run({ url: url() }, context())).rejects.toMatchObject({ code: 'tool_url_refused' });
  expect(prom.requests).toHaveLength(0);
  expect(other.requests).toHaveLength(0);
});

test('bad input and an empty allow list are clear errors', async () => {
  await expect(tool().run({}, context())).rejects.toMatchObject({ code: 'tool_bad_input' });
  await expect(tool().run('http://x', context())).rejects.toMatchObject({ code: 'tool_bad_input' });
  await expect(httpGetTool(undefined).run({ url: `${prom.url}/api/v1/query` }, context())).rejects.toMatchObject({ code: 'tool_unconfigured' });
});

test('a prefix without a trailing slash matches at a path boundary only', () => {
  const allow = [{ prefix: 'https://grafana.internal/api/v1' }];
  expect(allowedEntry('https://grafana.internal/api/v1', allow)).toBeDefined();
  expect(allowedEntry('https://grafana.internal/api/v1/x?y=1', allow)).toBeDefined();
  expect(allowedEntry('https://grafana.internal/api/v10', allow)).toBeUndefined();
  expect(allowedEntry('https://grafana.internal:444/api/v1', allow)).toBeUndefined();
  expect(allowedEntry('http://grafana.internal/api/v1', allow)).toBeUndefined();
});

test('a redirect staying under the prefix is followed; one leaving it is refused and not followed', async () => {
  expect(await tool().run({ url: `${prom.url}/api/v1/redirect-inside` }, context())).toContain('"resultType":"vector"');
  await expect(tool().run({ url: `${prom.url}/api/v1/redirect-outside` }, context())).rejects.toMatchObject({ code: 'tool_redirect_refused', message: expect.stringContaining('not followed') });
  await expect(tool().run({ url: `${prom.url}/api/v1/redirect-up` }, context())).rejects.toMatchObject({ code: 'tool_redirect_refused' });
  expect(other.requests).toHaveLength(0);
  expect(prom.requests.map((r) => r.url)).not.toContain('/admin/config');
});

test('the body is capped at max_bytes; a server that never answers is cut at the timeout; errors carry the status', async () => {
  const big = await tool({ max_bytes: 1000 }).run({ url: `${prom.url}/api/v1/big` }, context());
  expect(big).toContain('[truncated at 1000 bytes]');
  expect(big.length).toBeLessThan(1200);
  await expect(tool({ timeout_ms: 150 }).run({ url: `${prom.url}/api/v1/slow` }, context())).rejects.toMatchObject({ code: 'tool_http_error', message: expect.stringContaining('timed out') });
  await expect(tool().run({ url: `${prom.url}/api/v1/nope` }, context())).rejects.toMatchObject({ code: 'tool_http_error', message: expect.stringContaining('HTTP 404') });
});

describe('agent.http in config.yaml', () => {
  test('prefixes and headers with secret references, resolved like every other secret', async () => {
    const parsed = parseConfig('agent:\n  http:\n    allow:\n      - prefix: https://prometheus.internal/api/v1/\n        headers: { Authorization: "Bearer ${PROM_TOKEN}" }\n    timeout: 5s\n    max_bytes: 64KB\n  max_tokens: 1024\n  budget: { daily_tokens: 200000 }\n');
    if (!parsed.ok) throw new Error(parsed.error.message);
    expect(parsed.value.agent.max_tokens).toBe(1024);
    expect(parsed.value.agent.budget).toEqual({ daily_tokens: 200000 });
    const resolved = await resolveConfig(parsed.value, { get: async (name) => (name === 'PROM_TOKEN' ? 't0k' : undefined) });
    if (!resolved.ok) throw new Error(resolved.error.message);
    expect(resolved.value.agent.http).toEqual({ allow: [{ prefix: 'https://prometheus.internal/api/v1/', headers: { Authorization: 'Bearer t0k' } }], timeout_ms: 5000, max_bytes: 65536 });
  });

  test.each([
    ['agent:\n  http:\n    allow:\n      - prefix: https://p/\n        headers: { Authorization: "Bearer literal" }\n', 'agent.http.allow[0].headers.Authorization', 'inline secrets are not allowed'],
    ['agent:\n  http:\n    allow:\n      - prefix: ftp://p/\n', 'agent.http.allow[0].prefix', 'absolute http(s) URL'],
    ['agent:\n  http:\n    allow:\n      - prefix: "https://u:p@p/?q=1"\n', 'agent.http.allow[0].prefix', 'must not carry credentials'],
    ['agent:\n  http:\n    allow:\n      - headers: {}\n', 'agent.http.allow[0].prefix', ''],
    ['agent:\n  max_tokens: 0\n', 'agent.max_tokens', ''],
    ['agent:\n  budget: { daily_tokens: lots }\n', 'agent.budget.daily_tokens', ''],
    ['agent:\n  provider: anthropic\n', 'agent.model', "provider 'anthropic'"],
  ])('%p is refused at %s', (text, path, message) => {
    const parsed = parseConfig(text);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path, message: expect.stringContaining(message) })]));
  });
});
