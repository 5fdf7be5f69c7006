/**
 * A local Telegram Bot API that answers every sendMessage, started for the file's tests,
 * and `sent(reply)`: the texts Telegram receives, in order, when the `messenger` target
 * delivers `reply` (asserted delivered).
 */
import type { Config } from '../../functions/core/config/types';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import type { Subscription } from '../../functions/core/types';
import { sendJson, startLocalServer, type LocalServer } from './local-http';

export function useTelegramSent(): (reply: string) => Promise<string[]> {
  let telegram: LocalServer;
  let id = 0;
  beforeAll(async () => {
    telegram = await startLocalServer((_req, res) => sendJson(res, 200, { ok: true, result: { message_id: ++id, chat: { id: -100123 }, date: 0, text: '' } }));
  });
  afterAll(async () => telegram.close());
  return async (reply) => {
    const settings: Config['delivery'] = { timeout_ms: 2000, codehost: {}, messenger: { provider: 'telegram', bot_token: '42:T', chat_id: '-100123', api_url: telegram.url } };
    const subscription: Subscription = { name: 'tg', events: [], skills: [], deliver: ['messenger'], state: 'active', created_at: '', updated_at: '', secret: 'x' };
    const before = telegram.requests.length;
    const outcome = await createDeliveryTargets(settings, async () => {}).messenger.deliver({
      subscription, message: { v: 1, event_id: 'evt_t', subscription: 'tg', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '' },
      payload: {}, reply, settings, logger: jsonLogger(() => {}),
    });
    expect(outcome).toMatchObject({ status: 'delivered' });
    return telegram.requests.slice(before).map((r) => (JSON.parse(r.body) as { text: string }).text);
  };
}
