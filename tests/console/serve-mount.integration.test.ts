/**
 * `hookagent serve` answers the console at /console on loopback, next to the webhook
 * endpoints, over its own store: a subscription made with the CLI shows up there, a
 * webhook's event appears in the list, and the webhook routes are untouched.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signStandardWebhooks } from '../../functions/core/auth/signatures';
import { MASK } from '../../cli/console/redact';
import { isLoopbackPeer } from '../../cli/console/security';
import { buildCli, runCli } from '../support/cli';
import { eventually, startServe, stopServe } from '../support/serve';
import { serveConsole } from './serve-console-link';

beforeAll(() => buildCli(), 60_000);

test('serve mounts the console at /console; webhooks still reach ingest', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-serve-console-'));
  writeFileSync(join(dir, 'config.yaml'), '');
  // Secret-named variables of .env are masked even when config.yaml references none of them; other values are data.
  writeFileSync(join(dir, '.env'), 'UNUSED_API_TOKEN="tok-unreferenced-9f8e7d"\nDEPLOY_ZONE=eu-west-zone-b\n');
  const serve = await startServe(dir, { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' });
  try {
    // The banner's link carries the token serve's console asks for (scripts send it as Bearer).
    const { token, headers } = serveConsole(serve);
    expect(serve.output()).toContain(`console: ${serve.url}/console?token=${token} (from this machine only)`);
    const subscribed = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'alerts']);
    expect(subscribed.code).toBe(0);
    const secret = /whsec_[A-Za-z0-9+/=]+/.exec(subscribed.stdout)![0];

    const page = await fetch(`${serve.url}/console`, { headers });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>hookagent console</title>');
    const subs = await (await fetch(`${serve.url}/console/api/subscriptions`, { headers })).text();
    expect(JSON.parse(subs)).toEqual([expect.objectContaining({ name: 'alerts', urls: expect.objectContaining({ custom: `${serve.url}/webhooks/custom/alerts` }) })]);
    expect(subs).not.toContain(secret);

    const body = JSON.stringify({ alert: 'DiskFull', note: 'pasted tok-unreferenced-9f8e7d in eu-west-zone-b' });
    const at = Math.floor(Date.now() / 1000);
    const accepted = await fetch(`${serve.url}/webhooks/custom/alerts`, {
      method: 'POST', body,
      headers: { 'content-type': 'application/json', 'webhook-id': 'msg_1', 'webhook-timestamp': String(at), 'webhook-signature': signStandardWebhooks(body, secret, 'msg_1', at) },
    });
    expect(accepted.status).toBe(202);
    const { event_id: eventId } = (await accepted.json()) as { event_id: string };
    await eventually(async () => {
      const list = ((await (await fetch(`${serve.url}/console/api/events`, { headers })).json()) as { events: Array<{ event_id: string; status: string }> }).events;
      return list.some((e) => e.event_id === eventId && e.status === 'delivered');
    }, 'the event delivered in the console list');
    const detail = await (await fetch(`${serve.url}/console/api/events/${eventId}`, { headers })).text();
    expect(detail).not.toContain('tok-unreferenced-9f8e7d');
    expect(detail).toContain(`pasted ${MASK} in eu-west-zone-b`);
    expect((await fetch(`${serve.url}/health`)).status).toBe(200);
  } finally {
    expect(await stopServe(serve)).toBe(0);
  }
}, 60_000);

test('serve answers the console only to peers on this machine', () => {
  expect(isLoopbackPeer('127.0.0.1')).toBe(true);
  expect(isLoopbackPeer('::1')).toBe(true);
  expect(isLoopbackPeer('::ffff:127.0.0.1')).toBe(true);
  expect(isLoopbackPeer('192.168.1.20')).toBe(false);
  expect(isLoopbackPeer(undefined)).toBe(false);
});
