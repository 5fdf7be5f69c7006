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

/**
 * GitLab's `X-Gitlab-Event` values (project, group and system hooks) and the `object_kind`
 * each stands for. Only these: the header is a fallback for a payload without
 * `object_kind`, and any other value (a made-up `hello`) is no event type (400), not an
 * event a `gitlab:*` subscription would wake on.
 */
const GITLAB_HEADER_KINDS: Record<string, string> = {
  'Push Hook': 'push',
  'Tag Push Hook': 'tag_push',
  'Issue Hook': 'issue',
  'Confidential Issue Hook': 'issue',
  'Work Item Hook': 'work_item',
  'Note Hook': 'note',
  'Confidential Note Hook': 'note',
  'Merge Request Hook': 'merge_request',
  'Wiki Page Hook': 'wiki_page',
  'Pipeline Hook': 'pipeline',
  'Job Hook': 'build',
  'Deployment Hook': 'deployment',
  'Feature Flag Hook': 'feature_flag',
  'Release Hook': 'release',
  'Milestone Hook': 'milestone',
  'Emoji Hook': 'emoji',
  'Resource Access Token Hook': 'access_token',
  'Vulnerability Hook': 'vulnerability',
  'Member Hook': 'member',
  'Subgroup Hook': 'subgroup',
  'Project Hook': 'project',
  'System Hook': 'system',
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

/**
 * The first header of a delivery-id order that holds an id: an empty or blank one (a
 * sender's template with an unset variable) does not hide the next, which would make every
 * retry a new event.
 */
function firstId(...values: Array<string | undefined>): string | undefined {
  return values.find((value) => value !== undefined && value.trim() !== '');
}

export function gitlabKindFromHeader(header: string | undefined): string | undefined {
  // Own keys only: `__proto__` or `constructor` name no event.
  return header === undefined || !Object.hasOwn(GITLAB_HEADER_KINDS, header.trim()) ? undefined : GITLAB_HEADER_KINDS[header.trim()];
}

/** The `X-Gitlab-Event` header GitLab sends with an event of this kind (`system` → `System Hook`). */
export function gitlabHeaderFor(kind: string): string | undefined {
  return Object.keys(GITLAB_HEADER_KINDS).find((header) => GITLAB_HEADER_KINDS[header] === kind);
}

/**
 * A custom sender's event type (or action) as filters see it. Any string is accepted: a
 * name that is already valid (letters, digits, `_ . : / -`, starting with a letter or
 * digit, at most 100 characters) is kept as it is; otherwise every run of other
 * characters (spaces, punctuation, control characters, non-ASCII) becomes one `_`,
 * leading and trailing `_` are dropped and the result is cut to 100 characters:
 * "Build Failed" → `Build_Failed`, "disk > 90%!" → `disk_90`. Nothing left → undefined.
 */
export function customEventName(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (EVENT_TYPE.test(value)) return value;
  const name = value.replace(/[^A-Za-z0-9_.:/-]+/g, '_').replace(/^[^A-Za-z0-9]+/, '').slice(0, 100).replace(/_+$/, '');
  return name && EVENT_TYPE.test(name) ? name : undefined;
}

/** The answer when a request carries no usable event type, in the terms of its endpoint. */
export function missingEventMessage(source: Source): string {
  switch (source) {
    case 'github':
      return 'X-GitHub-Event header is missing or invalid';
    case 'gitlab':
      return 'No event type: object_kind is missing and X-Gitlab-Event is not recognised';
    case 'custom':
      return 'No usable event type: send X-Event-Type, or event_type, type or event in the payload';
  }
}

/**
 * The delivery id the sender states in its headers, before anything is verified: for log
 * lines of requests refused or failed early, so they can be matched with the sender's own
 * delivery log. Never a dedup key (classifyEvent decides that).
 */
export function statedDeliveryId(source: Source, headers: Headers): string | undefined {
  const stated = source === 'github' ? headers['x-github-delivery']
    : source === 'gitlab' ? firstId(headers['webhook-id'], headers['idempotency-key'], headers['x-gitlab-event-uuid'])
      : firstId(headers['webhook-id'], headers['x-request-id'], headers['idempotency-key'], headers['x-webhook-id']);
  return deliveryKey(stated);
}

/**
 * Kinds GitLab names in `event_name` (`"event_name": "push"`; the documented system-hook push
 * has no `object_kind`): for them `event_name` is the kind, never an action.
 */
const NAMED_BY_EVENT_NAME = new Set(['push', 'tag_push']);

/**
 * GitLab's event type and action (DESIGN §2.1). The event: `object_kind`, else the
 * `X-Gitlab-Event` header's kind. The action: the first of `object_attributes.action`
 * (merge requests, issues, comments, wiki pages), the top-level `action` (releases,
 * milestones), `event_name` (system, group member, project and subgroup hooks, access
 * tokens) and `event_type` (emoji: award, revoke) that is there and does not just repeat
 * the event's name (`event_type: issue` or `confidential_issue`, `event_name: push`).
 * System hooks about projects, groups, users, keys and members (`project_create`,
 * `user_add_to_team`, …) carry `event_name` and no `object_kind`: they stay the event
 * `system`, so `system.project_create` can pick them out. Any well-formed name is taken
 * (GitLab adds new ones); the lists of subscriptions/event-actions.ts only feed
 * `subscribe`'s checks.
 */
function gitlabEvent(headers: Headers, payload: Payload): { event?: string; action?: string } {
  const kind = text(payload.object_kind);
  const header = gitlabKindFromHeader(headers['x-gitlab-event']);
  const eventName = text(payload.event_name);
  if (!kind && header === 'system' && eventName !== undefined && NAMED_BY_EVENT_NAME.has(eventName)) return { event: eventName };
  const event = kind ?? header;
  const attributes = payload.object_attributes;
  const fields = [
    attributes && typeof attributes === 'object' ? (attributes as Payload).action : undefined,
    payload.action,
    event !== undefined && NAMED_BY_EVENT_NAME.has(event) ? undefined : eventName,
    payload.event_type,
  ];
  const action = fields.map(text).find((value) => value !== undefined && value !== event && value !== `confidential_${event}`);
  return { event, action };
}

/**
 * Undefined when the request carries no usable event type (GitHub and GitLab only).
 * `signed`: the request was authenticated by its Standard Webhooks signature, which covers
 * its `webhook-id` (a GitLab request that passed on its token has a webhook-id nobody vouched for).
 */
export function classifyEvent(source: Source, headers: Headers, payload: Payload, signed = false): EventIdentity | undefined {
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
      ({ event, action } = gitlabEvent(headers, payload));
      // A signed request (Standard Webhooks, GitLab 19+) is deduplicated on the signed
      // webhook-id: the unsigned Idempotency-Key could be changed to replay a captured request.
      // An unsigned webhook-id is not a key either: nothing vouches for it (DESIGN §2.1).
      deliveryId = signed ? firstId(headers['webhook-id']) : firstId(headers['idempotency-key'], headers['x-gitlab-event-uuid']);
      break;
    }
    case 'custom': {
      // Free text from any sender: normalised, never refused (see customEventName); alert senders' payloads are recognised.
      const alert = alertSenderEvent(payload);
      event = customEventName(text(headers['x-event-type']) ?? text(payload.event_type) ?? text(payload.type) ?? text(payload.event)) ?? alert?.event ?? 'custom';
      action = customEventName(text(payload.action)) ?? (alert && event === alert.event ? alert.action : undefined);
      // PagerDuty v3 keeps X-Webhook-Id across retries; other senders may name the hook with
      // that header (the same on every delivery), so it counts only for PagerDuty's payloads.
      deliveryId = firstId(headers['webhook-id'], headers['x-request-id'], headers['idempotency-key'], alert?.sender === 'pagerduty' ? headers['x-webhook-id'] : undefined);
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
