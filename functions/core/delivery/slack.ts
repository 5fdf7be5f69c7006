/** `teamchat` on Slack: an incoming webhook, or `chat.postMessage` with a bot token and channel. */
import type { TeamchatSettings } from '../config/types';
import { deliveryRequest, fitReply, type HttpOptions } from './http';
import { markdownToMrkdwn } from './mrkdwn';
import type { DeliveryOutcome, DeliveryRequest } from './target';

export const SLACK_TEXT_LIMIT = 40_000;

/** Slack's errors that a later attempt can get past; every other `error` is permanent. */
const RETRYABLE_ERRORS = new Set(['ratelimited', 'rate_limited', 'service_unavailable', 'request_timeout', 'fatal_error', 'internal_error']);

export async function postSlack(request: DeliveryRequest, settings: TeamchatSettings, http: Omit<HttpOptions, 'api'>): Promise<DeliveryOutcome> {
  const text = fitReply(markdownToMrkdwn(request.reply), SLACK_TEXT_LIMIT, '');
  const options: HttpOptions = { ...http, api: 'Slack', errorMessage: (body) => body.trim().slice(0, 200) || undefined };
  if (settings.webhook_url && !settings.bot_token) {
    // Incoming webhooks answer plain text: "ok", or an error word such as channel_not_found.
    const result = await deliveryRequest(settings.webhook_url, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text, mrkdwn: true }),
    }, options);
    return result.ok ? { status: 'delivered', detail: 'incoming webhook' } : result.failure;
  }
  const channel = request.subscription.channel ?? settings.channel;
  if (!channel) return { status: 'failed', retryable: false, code: 'channel_missing', message: 'Slack chat.postMessage needs a channel: set delivery.teamchat.channel or subscribe with --channel' };
  const result = await deliveryRequest(`${settings.api_url}/chat.postMessage`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${settings.bot_token ?? ''}` },
    body: JSON.stringify({ channel, text, mrkdwn: true }),
  }, { ...options, errorMessage: (body) => { try { return String((JSON.parse(body) as { error?: unknown }).error ?? ''); } catch { return undefined; } } });
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
