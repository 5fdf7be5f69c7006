/**
 * Direct delivery (`agent: none`): the rendered template is the message, delivered as is:
 * no agent, no model call, and `[SILENT]` does not apply. The worker (process.ts) and
 * `webhook test --dry-run` both go by these rules, so the dry run shows what is delivered.
 */
import { isSilent } from '../agent/silent';
import { renderPrompt, type Rendered } from '../templates/template';
import type { QueueMessage, Subscription } from '../types';

/** Whether the subscription's events are delivered without the agent. */
export function deliversDirectly(subscription: Pick<Subscription, 'agent'>): boolean {
  return subscription.agent === 'none';
}

/** The message a direct delivery posts: the prompt rendered for this event (`event.action`), its text as is. */
export function directMessage(subscription: Pick<Subscription, 'prompt'>, payload: unknown, event: Pick<QueueMessage, 'event' | 'action'>): Rendered {
  return renderPrompt(subscription.prompt, payload, event.action ? `${event.event}.${event.action}` : event.event);
}

/** Whether `reply` is suppressed rather than delivered: an agent's `[SILENT]`, never a direct delivery's text. */
export function silencedReply(subscription: Pick<Subscription, 'agent'>, reply: string): boolean {
  return !deliversDirectly(subscription) && isSilent(reply);
}
