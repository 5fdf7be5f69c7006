/**
 * http_get's prefix holds for servers that decode the path before resolving `..` (nginx's URI
 * normalisation, Python's http.server, Tomcat's `..;`): the URL parser keeps `..%2f` as one
 * segment, so the check also reads the path as such a server does. An encoded slash that
 * stays under the prefix (GitLab's `projects/group%2Fproject`) is still read.
 */
import { posix } from 'node:path';
import { allowedEntry, httpGetTool } from '../../functions/core/agent/http-get';
import type { ToolContext } from '../../functions/core/agent/tools';
import { startLocalServer, type LocalServer } from '../support/local-http';

const FILES: Record<string, string> = {
  '/runbooks/disk.md': 'check the disk',
  '/private/secret.txt': 'NOT-FOR-THE-MODEL',
  '/api/v4/projects/group/project/issues': '[{"iid":1}]',
};

let server: LocalServer;
beforeAll(async () => {
  // Decodes first, then resolves dot segments and `;` parameters: what nginx and friends do.
  server = await startLocalServer((req, res) => {
    const raw = new URL(req.url, 'http://x').pathname;
    const decoded = decodeURIComponent(raw).replace(/\\/g, '/').split('/').map((segment) => segment.split(';')[0]).join('/');
    const path = posix.normalize(decoded);
    if (path === '/runbooks/out') {
      res.writeHead(302, { location: '/runbooks/..%2fprivate/secret.txt' });
      res.end();
      return;
    }
    const body = FILES[path];
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'text/plain' });
    res.end(body ?? 'not found');
  });
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

const context = (): ToolContext => ({
  message: { v: 1, event_id: 'e', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '' },
  payload: {}, delivery: { timeout_ms: 1000, codehost: {} }, signal: AbortSignal.timeout(5000),
});
const tool = (prefix = '/runbooks/') => httpGetTool({ allow: [{ prefix: `${server.url}${prefix}`, headers: { Authorization: 'Bearer runbook-token-1' } }], timeout_ms: 2000, max_bytes: 4096 });

test('a file under the prefix is read', async () => {
  expect(await tool().run({ url: `${server.url}/runbooks/disk.md` }, context())).toContain('check the disk');
});

test.each([
  ['..%2f', '/runbooks/..%2fprivate/secret.txt'],
  ['..%2F', '/runbooks/..%2Fprivate/secret.txt'],
  ['%2e%2e%2f', '/runbooks/%2e%2e%2fprivate/secret.txt'],
  ['..%5c', '/runbooks/..%5cprivate/secret.txt'],
  ['..;/', '/runbooks/..;/private/secret.txt'],
  ['%2e%2e;x%2f', '/runbooks/%2e%2e;x%2fprivate/secret.txt'],
])('a path that leaves the prefix once decoded (%s) is refused before any request', async (_name, path) => {
  await expect(tool().run({ url: `${server.url}${path}` }, context())).rejects.toMatchObject({ code: 'tool_url_refused' });
  expect(server.requests).toHaveLength(0);
});

test('a redirect that leaves the prefix once decoded is not followed', async () => {
  await expect(tool().run({ url: `${server.url}/runbooks/out` }, context())).rejects.toMatchObject({ code: 'tool_redirect_refused' });
  expect(server.requests.map((r) => r.url)).toEqual(['/runbooks/out']);
});

test('an encoded slash that stays under the prefix is read (GitLab project paths)', async () => {
  const out = await tool('/api/v4/').run({ url: `${server.url}/api/v4/projects/group%2Fproject/issues` }, context());
  expect(out).toContain('"iid":1');
});

test('the decoded check, unit by unit', () => {
  const allow = [{ prefix: 'https://ops.example/runbooks' }];
  expect(allowedEntry('https://ops.example/runbooks/a.md', allow)).toBeDefined();
  expect(allowedEntry('https://ops.example/runbooks', allow)).toBeDefined();
  // Stays inside: `a/..` resolves back under the prefix.
  expect(allowedEntry('https://ops.example/runbooks/a%2f..%2fb.md', allow)).toBeDefined();
  // Leaves through a trailing `..` once decoded, or names a sibling: /runbooksX.
  expect(allowedEntry('https://ops.example/runbooks/..%2f', allow)).toBeUndefined();
  expect(allowedEntry('https://ops.example/runbooks%2f..%2frunbooksX', allow)).toBeUndefined();
  // Not valid percent-encoding: no server reads it one way only.
  expect(allowedEntry('https://ops.example/runbooks/%E0%A4%A', allow)).toBeUndefined();
});
