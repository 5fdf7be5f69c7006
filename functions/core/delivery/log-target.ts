/** The `log` target: the reply goes to the service log (and, by the worker, to the event log). */
import type { DeliveryRequest, DeliveryTarget } from './target';
import { cutText } from '../cut-text';
import { fitAdditions } from './chat-additions';
import type { ReplyAdditions } from './findings';

const LOGGED_REPLY_CAP = 4_000;

/** `request.reply` is the reply alone; `additions` (at most half the cap) are logged after it, also when it is truncated. */
export const logTarget = {
  kind: 'log',
  async deliver(request: DeliveryRequest, additions: ReplyAdditions = { findings: [] }) {
    const after = fitAdditions(additions, (markdown) => (markdown ? `\n\n${markdown}` : ''), (shown) => shown.length <= LOGGED_REPLY_CAP / 2);
    const room = LOGGED_REPLY_CAP - after.length;
    request.logger.info('agent reply', {
      event_id: request.message.event_id, subscription: request.subscription.name, event: request.message.event,
      reply: request.reply.length > room ? `${cutText(request.reply, room)}…[truncated]${after}` : `${request.reply}${after}`,
    });
    return { status: 'delivered', detail: 'service log' };
  },
} satisfies DeliveryTarget;
