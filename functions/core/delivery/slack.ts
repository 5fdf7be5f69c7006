/** `teamchat` on Slack: an incoming webhook, or `chat.postMessage` with a bot token and channel. */
import type { TeamchatSettings } from '../config/types';
import { cutText } from '../cut-text';
import { redactExcerpt, secretValuesOf } from '../redact';
import { fitAdditions } from './chat-additions';
import type { ReplyAdditions } from './findings';
import { cutNote, deliveryRequest, type HttpOptions } from './http';
import { markdownToMrkdwn } from './mrkdwn';
import { deliveryMetadata, findEarlierPost, LOOKUP_NEEDS } from './slack-lookup';
import type { DeliveryOutcome, DeliveryRequest } from './target';

export const SLACK_TEXT_LIMIT = 40_000;

/** Slack's errors that a later attempt can get past; every other `error` is permanent. */
const RETRYABLE_ERRORS = new Set(['ratelimited', 'rate_limited', 'service_unavailable', 'request_timeout', 'fatal_error', 'internal_error']);

/** An incoming webhook (and no bot token) is what postSlack uses: it posts only to the channel it was made for. */
export const slackWebhookOnly = (settings: TeamchatSettings) => Boolean(settings.webhook_url && !settings.bot_token);

/** Why a subscription's channel is not used with an incoming webhook, and what to change. */
export const ignoredChannel = (channel: string) =>
  `channel ${channel} is not used: delivery.teamchat is an incoming webhook (webhook_url), which posts only to its own channel; choosing the channel needs delivery.teamchat.bot_token`;

/**
 * The mrkdwn cut to `limit`, with `after` (hookagent's additions, already mrkdwn) kept whole
 * after it. Slack counts the `text` field it receives, so an escaped `<` counts as its 4
 * characters of `&lt;` here too; the note gives the reply's own length. Every `&` and `<` in
 * mrkdwn opens an entity or a link (mrkdwn.ts escapes the rest), so an unfinished one at the
 * cut is dropped whole; an open code block is closed, so the note and `after` do not read as code.
 */
export function fitMrkdwn(mrkdwn: string, replyLength: number, limit = SLACK_TEXT_LIMIT, after = ''): string {
  if (mrkdwn.length + after.length <= limit) return `${mrkdwn}${after}`;
  const note = cutNote(replyLength);
  const close = '\n```';
  const cut = cutText(mrkdwn, Math.max(0, limit - after.length - note.length - close.length))
    .replace(/<[^>]*$/, '')
    .replace(/&[^;]*$/, '')
    // Half a fence line ("``") is no fence.
    .replace(/(^|\n)`{1,2}$/, '');
  const open = (cut.match(/^```$/gm) ?? []).length % 2 === 1;
  return `${cut}${open ? close : ''}${note}${after}`;
}

/**
 * No link or media previews: Slack fetches each URL in a message to preview it, so a reply
 * steered into a link carrying data would send it to that server before anyone clicks.
 * No plain-text mentions: Slack makes `@here`, `@channel`, `@name` and `#channel` live only
 * when a message asks (`link_names`, `parse: full`); said explicitly, and `parse` never
 * sent, so they stay text (mrkdwn.ts escapes `<`, so `<!here>` and `<@U…>` cannot be built).
 */
const INERT_POST = { unfurl_links: false, unfurl_media: false, link_names: false } as const;

/**
 * `request.reply` is the reply alone; `additions` go after it, converted on their own (the
 * reply's conversion closes a code block it leaves open), in what the reply leaves free or half the post, whichever is more.
 */
export async function postSlack(request: DeliveryRequest, settings: TeamchatSettings, http: Omit<HttpOptions, 'api'>, additions: ReplyAdditions = { findings: [] }): Promise<DeliveryOutcome> {
  const reply = markdownToMrkdwn(request.reply);
  const room = Math.max(SLACK_TEXT_LIMIT / 2, SLACK_TEXT_LIMIT - reply.length);
  const after = fitAdditions(additions, (markdown) => (markdown ? `\n\n${markdownToMrkdwn(markdown)}` : ''), (shown) => shown.length <= room);
  const text = fitMrkdwn(reply, request.reply.length, SLACK_TEXT_LIMIT, after);
  // A Slack post has no marker to search for: never re-sent in place once it may have arrived.
  // Plain-text errors are cut to 200 characters, masked first: a cut could split a quoted credential out of reach of the worker's masking.
  const options: HttpOptions = { ...http, api: 'Slack', postsOnce: true, errorMessage: (body) => redactExcerpt(body.trim(), secretValuesOf(request.settings), 200) || undefined };
  if (slackWebhookOnly(settings)) {
    // Incoming webhooks answer plain text: "ok", or an error word such as channel_not_found.
    const result = await deliveryRequest(settings.webhook_url as string, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text, mrkdwn: true, ...INERT_POST }),
    }, options);
    if (!result.ok) return result.failure;
    // A webhook cannot be told where to post (Slack: "You cannot override the default channel"): say so.
    const channel = request.subscription.channel;
    if (!channel) return { status: 'delivered', detail: 'incoming webhook' };
    request.logger.warn('teamchat_channel_not_used', { event_id: request.message.event_id, subscription: request.subscription.name, reason: ignoredChannel(channel) });
    return { status: 'delivered', detail: `incoming webhook, to its own channel (${ignoredChannel(channel)})` };
  }
  const channel = request.subscription.channel ?? settings.channel;
  if (!channel) return { status: 'failed', retryable: false, code: 'channel_missing', message: 'Slack chat.postMessage needs a channel: set delivery.teamchat.channel or subscribe with --channel' };
  const token = settings.bot_token ?? '';
  // The post names its delivery in its metadata, so a retry can find it (slack-lookup.ts).
  const metadata = deliveryMetadata(request);
  /** The ts of this delivery's post when the search finds one; never lets the search lose the delivery (unknown: posted again, with a warning). */
  const searchEarlier = async (since: string, what: string): Promise<string | undefined> => {
    const earlier = await findEarlierPost(settings.api_url, token, channel, metadata.event_payload, since, http);
    if (earlier.kind === 'found') {
      request.logger.info('teamchat_found_earlier_post', { event_id: request.message.event_id, subscription: request.subscription.name, ts: earlier.ts });
      return earlier.ts;
    }
    if (earlier.kind === 'unknown') {
      request.logger.warn('teamchat_earlier_post_unknown', {
        event_id: request.message.event_id, subscription: request.subscription.name, reason: earlier.reason,
        effect: `${what} may have posted this reply already; it is posted again and may appear twice`,
        prevent: LOOKUP_NEEDS,
      });
    }
    return undefined;
  };
  if (request.earlierAttempt) {
    const ts = await searchEarlier(request.earlierAttempt.since, 'an earlier attempt');
    if (ts) return { status: 'delivered', detail: `channel ${channel} ts ${ts} (posted by an earlier attempt, found by its metadata)` };
  }
  // A 5xx may come from a gateway after Slack made the post: the in-place retry searches first.
  const firstSent = new Date().toISOString();
  let foundAfter5xx: string | undefined;
  const beforeResend = async () => {
    foundAfter5xx = await searchEarlier(firstSent, 'the attempt answered with a 5xx');
    return foundAfter5xx === undefined;
  };
  const result = await deliveryRequest(`${settings.api_url}/chat.postMessage`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${token}` },
    body: JSON.stringify({ channel, text, mrkdwn: true, ...INERT_POST, metadata }),
  }, { ...options, beforeResend, errorMessage: (body) => { try { return String((JSON.parse(body) as { error?: unknown }).error ?? ''); } catch { return undefined; } } });
  if (foundAfter5xx) return { status: 'delivered', detail: `channel ${channel} ts ${foundAfter5xx} (answered with a 5xx, then found by its metadata)` };
  if (!result.ok) return result.failure;
  let answer: { ok?: boolean; error?: string; ts?: string; channel?: string };
  try {
    answer = JSON.parse(result.body) as typeof answer;
  } catch {
    return { status: 'failed', retryable: true, code: 'bad_response', message: 'Slack answered with something that is not JSON' };
  }
  if (answer.ok) return { status: 'delivered', detail: `channel ${answer.channel ?? channel} ts ${answer.ts ?? '?'}` };
  const error = answer.error ?? 'unknown_error';
  return { status: 'failed', retryable: RETRYABLE_ERRORS.has(error), code: `slack_${error}`, message: `Slack refused the message: ${error}` };
}
