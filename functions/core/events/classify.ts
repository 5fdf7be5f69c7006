/** What an inbound event is: its type, action and delivery id, per endpoint (DESIGN §2.1). */
import { createHash } from 'node:crypto';
import type { Headers } from '../auth/signatures';
import type { Source } from '../types';
import { alertSenderEvent } from './alert-senders';

export interface EventIdentity {
  event: string;
  action?: string;
  /** The sender's delivery id, when it sent one (the dedup key). */
  deliveryId?: string;
}

export type Payload = Record<string, unknown>;

/** GitLab's `X-Gitlab-Event` values whose `object_kind` is not the obvious snake case. */
const GITLAB_HEADER_KINDS: Record<string, string> = {
  'Confidential Issue Hook': 'issue',
  'Confidential Note Hook': 'note',
  'Job Hook': 'build',
  'Work Item Hook': 'work_item',
};

const EVENT_TYPE = /^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,99}$/;

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.length > 0 ? value : undefined);

/** A delivery id is used as a key: long or odd ones are hashed to a fixed size. */
function deliveryKey(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  if (!trimmed) return undefined;
  if (/^[\x21-\x7e]{1,128}$/.test(trimmed)) return trimmed;
  return `sha256:${createHash('sha256').update(trimmed).digest('hex')}`;
}

export function gitlabKindFromHeader(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const mapped = GITLAB_HEADER_KINDS[header];
  if (mapped) return mapped;
  const words = header.replace(/\s+Hook$/i, '').trim();
  return words ? words.toLowerCase().replace(/\s+/g, '_') : undefined;
}

/** Undefined when the request carries no usable event type (GitHub and GitLab only). */
export function classifyEvent(source: Source, headers: Headers, payload: Payload): EventIdentity | undefined {
  let event: string | undefined;
  let action: string | undefined;
  let deliveryId: string | undefined;
  switch (source) {
    case 'github':
      event = text(headers['x-github-event']);
      action = text(payload.action);
      deliveryId = headers['x-github-delivery'];
      break;
    case 'gitlab': {
      event = text(payload.object_kind) ?? gitlabKindFromHeader(headers['x-gitlab-event']);
      const attributes = payload.object_attributes;
      if (attributes && typeof attributes === 'object') action = text((attributes as Payload).action);
      // Signed webhooks (GitLab 19+) send webhook-id with the same value as Idempotency-Key.
      deliveryId = headers['idempotency-key'] ?? headers['x-gitlab-event-uuid'] ?? headers['webhook-id'];
      break;
    }
    case 'custom': {
      const alert = alertSenderEvent(payload);
      event = text(headers['x-event-type']) ?? text(payload.event_type) ?? text(payload.type) ?? text(payload.event) ?? alert?.event ?? 'custom';
      action = text(payload.action) ?? (alert && event === alert.event ? alert.action : undefined);
      deliveryId = headers['webhook-id'] ?? headers['x-request-id'] ?? headers['idempotency-key'];
      break;
    }
  }
  if (!event || !EVENT_TYPE.test(event)) return undefined;
  const identity: EventIdentity = { event };
  if (action && EVENT_TYPE.test(action)) identity.action = action;
  const key = deliveryKey(deliveryId);
  if (key) identity.deliveryId = key;
  return identity;
}
