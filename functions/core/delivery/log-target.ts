/** The `log` target: the reply goes to the service log (and, by the worker, to the event log). */
import type { DeliveryTarget } from './target';
import { cutText } from '../cut-text';

const LOGGED_REPLY_CAP = 4_000;

export const logTarget: DeliveryTarget = {
  kind: 'log',
  async deliver(request) {
    request.logger.info('agent reply', {
      event_id: request.message.event_id, subscription: request.subscription.name, event: request.message.event,
      reply: request.reply.length > LOGGED_REPLY_CAP ? `${cutText(request.reply, LOGGED_REPLY_CAP)}…[truncated]` : request.reply,
    });
    return { status: 'delivered', detail: 'service log' };
  },
};
