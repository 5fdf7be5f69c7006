/**
 * A chat post whose answer is lost (the server read the whole request, then reset the
 * connection) is not posted again in place: Slack and Telegram cannot be asked whether
 * it arrived. A connection that was never made (refused) is still retried in place, and a
 * 5xx answer still is. Local servers speak Slack's incoming-webhook and chat.postMessage
 * wire format and Telegram's Bot API.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../../functions/core/config/types';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets, type TargetKind } from '../../functions/core/delivery/targets';
import { silentLogger } from '../../functions/core/log';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

const waits: number[] = [];
const sleep = async (ms: number) => void waits.push(ms);

function request(eventId: string): DeliveryRequest {
  return {
    subscription: { name: 'alerts', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x' },
    message: { v: 1, event_id: eventId, subscription: 'alerts', source: 'custom', event: 'alert', delivery_id: eventId, received_at: '' },
    payload: {}, reply: 'Disk full on db1.', settings: { timeout_ms: 2_000, codehost: {} }, logger: silentLogger,
  };
}

/** The settings of one chat target pointed at `url`. */
const chats: Array<[string, TargetKind, (url: string) => Config['delivery']]> = [
  ['Slack incoming webhook', 'teamchat', (url) => ({ timeout_ms: 2_000, codehost: {}, teamchat: { provider: 'slack', webhook_url: `${url}/services/T/B/X`, api_url: 'unused' } })],
  ['Slack chat.postMessage', 'teamchat', (url) => ({ timeout_ms: 2_000, codehost: {}, teamchat: { provider: 'slack', bot_token: 'xoxb-1', channel: '#ops', api_url: url } })],
  ['Telegram sendMessage', 'messenger', (url) => ({ timeout_ms: 2_000, codehost: {}, messenger: { provider: 'telegram', bot_token: '1:ABC', chat_id: '-100', api_url: url } })],
];

/** What each API answers to a post that arrived. */
function answer(kind: string, res: Parameters<LocalServer['respond']>[1]): void {
  if (kind.includes('webhook')) {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  } else if (kind.includes('chat.postMessage')) sendJson(res, 200, { ok: true, channel: 'C1', ts: '1.2' });
  else sendJson(res, 200, { ok: true, result: { message_id: 7 } });
}

beforeEach(() => {
  waits.length = 0;
});

describe.each(chats)('%s', (kind, target, settingsFor) => {
  test('the whole post read, then the connection reset: posted once, a retryable network_error for the queue', async () => {
    // Called once the request is read in full (the chat has it); the answer is lost.
    const server = await startLocalServer((_req, res) => void res.socket?.destroy());
    try {
      const settings = settingsFor(server.url);
      const outcome = await createDeliveryTargets(settings, sleep)[target].deliver({ ...request('evt_reset'), settings });
      expect(server.requests).toHaveLength(1);
      expect(waits).toEqual([]);
      expect(outcome).toMatchObject({ status: 'failed', retryable: true, code: 'network_error' });
      expect(outcome.status === 'failed' && outcome.message).toMatch(/the connection failed once the message may have been sent \(.+\); not tried again at once/);
    } finally {
      await server.close();
    }
  });

  test('a connection refused is retried in place (nothing was sent), and posts once when the chat is back', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const received: string[] = [];
    let server: Server | undefined;
    // The chat comes up during the first backoff pause.
    const startOnPause = async (ms: number) => {
      waits.push(ms);
      if (server) return;
      server = createServer((req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          received.push(body);
          answer(kind, res);
        });
      });
      await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    };
    try {
      const settings = settingsFor(url);
      const outcome = await createDeliveryTargets(settings, startOnPause)[target].deliver({ ...request('evt_refused'), settings });
      expect(outcome).toMatchObject({ status: 'delivered' });
      expect(waits).toHaveLength(1);
      expect(received).toHaveLength(1);
    } finally {
      server?.closeAllConnections();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    }
  });

  test('a 503 answer is an answer: still retried in place', async () => {
    let calls = 0;
    const server = await startLocalServer((_req, res) => {
      calls += 1;
      if (calls === 1) return sendJson(res, 503, { ok: false, error: 'service_unavailable', description: 'Service Unavailable' });
      answer(kind, res);
    });
    try {
      const settings = settingsFor(server.url);
      expect(await createDeliveryTargets(settings, sleep)[target].deliver({ ...request('evt_503'), settings })).toMatchObject({ status: 'delivered' });
      expect(server.requests).toHaveLength(2);
    } finally {
      await server.close();
    }
  });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
