/**
 * `messenger` on Telegram: Bot API `sendMessage` in HTML mode with every character that
 * HTML gives meaning escaped, so no reply can break the formatting; replies over 4,096
 * characters go as several messages, split at line boundaries, in order (at most
 * TELEGRAM_MAX_PARTS, the reply cut with a note before hookagent's additions).
 *
 * Telegram makes every `@username` in a message a mention, and in a group a mention
 * notifies that member even when they muted the chat: a steered reply could page anyone
 * in it. So each gets a zero-width space after the `@` (it still reads `@alice`), always,
 * code-looking text included (Telegram shows the reply as plain text), except in the path
 * of a URL Telegram links whole, where it makes no mention (references.ts). There is no setting
 * to keep them live: a group message already notifies every member who has not muted the
 * chat, and `delivery.codehost.allow_mentions` is about code-host comments only.
 */
import type { MessengerSettings } from '../config/types';
import { cutText } from '../cut-text';
import { fitAdditions } from './chat-additions';
import { flattenFindings, type ReplyAdditions } from './findings';
import { cutNote, deliveryRequest, type HttpOptions } from './http';
import { breakPlainMentions } from './references';
import { splitMessage } from './split';
import type { DeliveryOutcome, DeliveryRequest } from './target';

export const TELEGRAM_TEXT_LIMIT = 4_096;
/**
 * At most this many messages for one reply (about Slack's 40,000 characters), the last one
 * ending with the cut note. A reply of a megabyte (payload text an `--agent none` template or
 * a steered reply quotes) was some 250 messages, each notifying the group; past Telegram's
 * 20 messages a minute in a group it failed midway, and each retry sent every part again.
 */
export const TELEGRAM_MAX_PARTS = 10;

export const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Telegram's `description`; when a group became a supergroup, Telegram names the new chat
 * (ResponseParameters.migrate_to_chat_id) and every later message to the old id fails, so
 * the message says which setting to change to which id.
 */
function telegramError(body: string, fix: (chatId: string) => string): string | undefined {
  let answer: { description?: unknown; parameters?: { migrate_to_chat_id?: unknown } };
  try {
    answer = JSON.parse(body) as typeof answer;
  } catch {
    return undefined;
  }
  const description = String(answer?.description ?? '');
  const moved = answer?.parameters?.migrate_to_chat_id;
  if (typeof moved !== 'number' && typeof moved !== 'string') return description;
  return `${description}; the group is now the supergroup ${moved}: ${fix(String(moved))}`;
}

/** `request.reply` is the reply alone; `additions` go after it, and survive its cut as the last part or parts. */
export async function sendTelegram(request: DeliveryRequest, settings: MessengerSettings, http: Omit<HttpOptions, 'api'>, additions: ReplyAdditions = { findings: [] }): Promise<DeliveryOutcome> {
  const chatId = request.subscription.chat_id ?? settings.chat_id;
  if (!chatId) return { status: 'failed', retryable: false, code: 'chat_id_missing', message: 'Telegram needs a chat id: set delivery.messenger.chat_id or subscribe with --chat-id' };
  const options: HttpOptions = {
    // A Telegram message has no marker to search for: never re-sent in place once it may have arrived.
    ...http, api: 'Telegram', postsOnce: true,
    errorMessage: (body) => telegramError(body, (id) => (request.subscription.chat_id
      ? `run hookagent webhook update ${request.subscription.name} --chat-id=${id}`
      : `set delivery.messenger.chat_id to "${id}"`)),
    rateLimitWait: (status, _headers, body) => {
      if (status !== 429) return undefined;
      try {
        const seconds = (JSON.parse(body) as { parameters?: { retry_after?: unknown } }).parameters?.retry_after;
        return typeof seconds === 'number' ? seconds * 1000 : 1000;
      } catch {
        return 1000;
      }
    },
  };
  // The limit counts characters after entity parsing, so split before escaping (and after the breaks, which count).
  const split = (text: string) => splitMessage(breakPlainMentions(text), TELEGRAM_TEXT_LIMIT);
  let chunks = split(flattenFindings({ ...additions, text: request.reply }));
  if (chunks.length > TELEGRAM_MAX_PARTS) {
    // Cut: the reply alone, to the parts its additions leave (they take what the reply leaves free or half the parts, whichever is more); they are the last parts.
    const reply = split(request.reply);
    const room = Math.max(TELEGRAM_MAX_PARTS / 2, TELEGRAM_MAX_PARTS - reply.length);
    const after = fitAdditions(additions, (markdown) => (markdown ? split(markdown) : []), (parts) => parts.length <= room);
    const budget = TELEGRAM_MAX_PARTS - after.length;
    if (reply.length > budget) {
      const note = cutNote(request.reply.length);
      reply.length = budget;
      reply[budget - 1] = `${cutText(reply[budget - 1] as string, TELEGRAM_TEXT_LIMIT - note.length)}${note}`;
    }
    chunks = [...reply, ...after];
  }
  const ids: string[] = [];
  for (const [index, chunk] of chunks.entries()) {
    const result = await deliveryRequest(`${settings.api_url}/bot${settings.bot_token}/sendMessage`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ chat_id: chatId, text: escapeHtml(chunk), parse_mode: 'HTML', link_preview_options: { is_disabled: true } }),
    }, options);
    if (!result.ok) {
      const failure = result.failure;
      return index === 0 ? failure : { ...failure, message: `${failure.message} (after ${index} of ${chunks.length} parts were sent)` };
    }
    const sent = JSON.parse(result.body) as { result?: { message_id?: number } };
    ids.push(String(sent.result?.message_id ?? '?'));
  }
  return { status: 'delivered', detail: `chat ${chatId} message${ids.length > 1 ? 's' : ''} ${ids.join(',')}` };
}
