/** The vocabulary shared by ingest, worker, CLI and adapters. */

/** Where an event came in: one of the three webhook endpoints. */
export type Source = 'github' | 'gitlab' | 'custom';

export type SubscriptionState = 'active' | 'paused';

/** Delivery targets of DESIGN §2.4. */
export const TARGET_KINDS = ['codehost_comment', 'teamchat', 'messenger', 'log'] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

export const SUBSCRIPTION_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export interface Subscription {
  name: string;
  /** Event filters: `pull_request` (every action) or `pull_request.opened`. Empty = every event. */
  events: string[];
  prompt?: string;
  skills: string[];
  deliver: TargetKind[];
  description?: string;
  state: SubscriptionState;
  /** Team chat channel for this subscription, overriding `delivery.teamchat.channel`. */
  channel?: string;
  /** Messenger chat id for this subscription, overriding `delivery.messenger.chat_id`. */
  chat_id?: string;
  created_at: string;
  updated_at: string;
  /** The custom endpoint's secret (Standard Webhooks form `whsec_<base64>`). */
  secret: string;
}

/**
 * One SQS message: one accepted event for one subscription.
 * `payload` travels inline unless the message would be too large; then `payload_ref`
 * points into the PayloadStore.
 */
export interface QueueMessage {
  v: 1;
  event_id: string;
  subscription: string;
  source: Source;
  event: string;
  action?: string;
  delivery_id: string;
  received_at: string;
  payload?: Record<string, unknown>;
  payload_ref?: string;
  /** Set by `replay`: a new attempt of an event that already ran. */
  replay_of?: string;
}

export type EventStatus = 'held' | 'queued' | 'processing' | 'delivered' | 'suppressed' | 'failed';

export interface TargetOutcome {
  status: 'delivered' | 'failed';
  /** Where it went (comment URL, chat id) or why it failed. */
  detail?: string;
  at: string;
}

/** One record of the event log: one event for one subscription. */
export interface EventRecord {
  event_id: string;
  subscription: string;
  status: EventStatus;
  source: Source;
  event: string;
  action?: string;
  delivery_id: string;
  received_at: string;
  updated_at: string;
  /** The queue message, kept so held events can be released and lost work recovered. */
  message: QueueMessage;
  prompt?: string;
  reply?: string;
  warnings?: string[];
  targets?: Record<string, TargetOutcome>;
  attempts?: number;
  error?: { code: string; message: string };
  timings?: Record<string, number>;
}
