/**
 * The GitHub App library's notes (auth-app's clock-skew retry) go to hookagent's logger
 * for the call at hand, as its lines with the event id and subscription, not to the
 * console (hunt 12 D4). A local GitHub whose clock runs 90 s behind this machine's
 * refuses the first JWT ("'Issued at' claim"); auth-app re-signs it from GitHub's Date
 * header and says so.
 */
import { createVerify, generateKeyPairSync } from 'node:crypto';
import type { Config } from '../../functions/core/config/types';
import { codehostClient, isFailure } from '../../functions/core/delivery/codehost-api';
import { clearInstallationTokens } from '../../functions/core/delivery/github-app';
import { subjectOf } from '../../functions/core/events/subject';
import { childLogger, jsonLogger } from '../../functions/core/log';
import { startFakeCodehost, type FakeCodehost } from '../support/fake-codehost';
import { sendJson } from '../support/local-http';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PEM = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
const GITHUB_BEHIND_S = 90;
let host: FakeCodehost;

beforeAll(async () => {
  host = await startFakeCodehost();
});
afterAll(async () => host.close());
beforeEach(() => {
  clearInstallationTokens();
  host.reset();
  host.extra = (req, res, url) => {
    const githubNow = Math.floor(Date.now() / 1000) - GITHUB_BEHIND_S;
    const date = { date: new Date(githubNow * 1000).toUTCString() };
    if (!/^\/app\/installations\/\d+\/access_tokens$/.test(url.pathname) || req.method !== 'POST') return false;
    const [header, payload, signature] = String(req.headers.authorization).replace(/^bearer /i, '').split('.');
    const valid = createVerify('RSA-SHA256').update(`${header}.${payload}`).verify(publicKey, Buffer.from(signature!, 'base64url'));
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as { iat: number };
    if (!valid) return sendJson(res, 401, { message: 'A JSON web token could not be decoded' }, date), true;
    if (claims.iat > githubNow) return sendJson(res, 401, { message: "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued.", documentation_url: 'https://docs.github.com/rest' }, date), true;
    sendJson(res, 201, { token: 'ghs_installation_1', expires_at: new Date((githubNow + 3600) * 1000).toISOString(), permissions: { issues: 'write' } }, date);
    return true;
  };
});
afterEach(() => jest.restoreAllMocks());

const settings = (): Config['delivery']['codehost'] => ({ github: { token: '', api_url: host.url, app: { app_id: '12345', private_key: PEM } } });
const payload = { action: 'opened', repository: { full_name: 'octo/widgets' }, issue: { number: 3 }, installation: { id: 42 } };

/** A comment posted as the App, through a client whose calls log to `lines` as event `eventId`. */
async function postAs(eventId: string, lines: string[]): Promise<void> {
  const logger = childLogger(jsonLogger((line) => lines.push(line), 'debug'), { event_id: eventId, subscription: 'triage' });
  // The options codehost-comment.ts hands over, with the delivery's logger.
  const http = { timeoutMs: 2000, logger };
  const client = codehostClient(subjectOf('github', 'issues', payload, eventId), settings(), http, { installationId: 42 });
  if (isFailure(client)) throw new Error(client.failure.message);
  const posted = await client.request('/issues/3/comments', { method: 'POST', body: { body: `hello from ${eventId}` }, attempts: 1 });
  expect(posted).toMatchObject({ ok: true, status: 201 });
}

test('auth-app\'s clock-skew notes are JSON lines of the call\'s logger with its event id and subscription; nothing reaches the console', async () => {
  const console_ = [jest.spyOn(console, 'warn').mockImplementation(() => {}), jest.spyOn(console, 'error').mockImplementation(() => {}), jest.spyOn(console, 'log').mockImplementation(() => {})];
  const lines: string[] = [];
  await postAs('evt_skew', lines);
  const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(parsed).toEqual(expect.arrayContaining([
    expect.objectContaining({ level: 'warn', event_id: 'evt_skew', subscription: 'triage', message: expect.stringContaining('GitHub API time and system time are different by -90 seconds') }),
    expect.objectContaining({ level: 'warn', event_id: 'evt_skew', subscription: 'triage', message: expect.stringContaining("'Issued at' claim") }),
  ]));
  expect(console_.flatMap((spy) => spy.mock.calls)).toEqual([]);
  expect(host.comments.get('/repos/octo/widgets/issues/3')?.map((c) => c.body)).toEqual(['hello from evt_skew']);
});
