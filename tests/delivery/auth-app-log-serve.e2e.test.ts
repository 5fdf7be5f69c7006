/**
 * `hookagent serve --log-format json` with a GitHub App identity, against a local GitHub
 * whose clock is 90 s behind this machine's. auth-app corrects the JWT from GitHub's Date
 * header and says so; its notes are lines of hookagent's log, with the delivery's event id
 * and subscription. Before, it wrote them with console.warn, straight into serve's JSON log:
 * lines that were not JSON and named no event.
 */
import { createVerify, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { buildCli, runCli } from '../support/cli';
import { startFakeCodehost, type FakeCodehost } from '../support/fake-codehost';
import { sendJson } from '../support/local-http';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const GH = 'app-log-secret';
const env = { GH, GITHUB_APP_PRIVATE_KEY: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(), AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
let host: FakeCodehost;
let serve: Serve | undefined;
let dir: string;

beforeAll(async () => {
  buildCli();
  host = await startFakeCodehost();
  host.extra = (req, res, url) => {
    const githubNow = Math.floor(Date.now() / 1000) - 90;
    const date = { date: new Date(githubNow * 1000).toUTCString() };
    if (/^\/app\/installations\/\d+\/access_tokens$/.test(url.pathname) && req.method === 'POST') {
      const [header, payload, signature] = String(req.headers.authorization).replace(/^bearer /i, '').split('.');
      const valid = createVerify('RSA-SHA256').update(`${header}.${payload}`).verify(publicKey, Buffer.from(signature!, 'base64url'));
      const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as { iat: number; exp: number };
      if (!valid) return sendJson(res, 401, { message: 'A JSON web token could not be decoded' }, date), true;
      if (claims.iat > githubNow) return sendJson(res, 401, { message: "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued.", documentation_url: 'https://docs.github.com/rest' }, date), true;
      sendJson(res, 201, { token: 'ghs_installation_1', expires_at: new Date((githubNow + 3600) * 1000).toISOString(), permissions: { issues: 'write' } }, date);
      return true;
    }
    return false;
  };
  dir = mkdtempSync(join(tmpdir(), 'hookagent-applog-'));
  writeFileSync(join(dir, 'config.yaml'), [
    'webhooks: { github: { secret: ${GH} } }',
    'delivery:',
    '  codehost:',
    '    github:',
    `      api_url: "${host.url}"`,
    '      app: { app_id: 12345, private_key: ${GITHUB_APP_PRIVATE_KEY} }',
  ].join('\n'));
  expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'triage', '--events', 'issues.opened', '--agent', 'none', '--prompt', 'Thanks for #{issue.number}', '--deliver', 'codehost_comment'], env)).code).toBe(0);
}, 60_000);
afterAll(async () => {
  if (serve) await stopServe(serve);
  await host.close();
  rmSync(dir, { recursive: true, force: true });
});

test('every line serve writes with --log-format json is a JSON object: the App library\'s clock-skew notes carry the event and subscription', async () => {
  serve = await startServe(dir, env, { args: ['--log-format', 'json'] });
  const body = JSON.stringify({ action: 'opened', issue: { number: 3, title: 't' }, repository: { full_name: 'octo/widgets' }, installation: { id: 42 } });
  const answer = await fetch(`${serve.url}/webhooks/github`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': 'app-log-1', 'x-hub-signature-256': signHub(body, GH) } });
  expect(answer.status).toBe(202);
  await eventually(() => (host.comments.get('/repos/octo/widgets/issues/3') ?? []).length === 1, 'the comment as the App');
  await stopServe(serve);
  const startIndex = serve.output().split('\n').findIndex((l) => l.startsWith('{'));
  const logLines = serve.output().split('\n').slice(startIndex).filter((l) => l.trim() !== '');
  const notJson = logLines.filter((l) => { try { return typeof JSON.parse(l) !== 'object'; } catch { return true; } });
  serve = undefined;
  expect(notJson).toEqual([]);
  const notes = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.from === 'octokit');
  expect(notes.length).toBeGreaterThan(0);
  for (const note of notes) expect(note).toMatchObject({ level: 'warn', subscription: 'triage', event_id: expect.stringMatching(/^evt_/) });
}, 60_000);
