/** The vocabulary shared by ingest, worker, CLI and adapters. */

/** Where an event came in: one of the three webhook endpoints. */
export type Source = 'github' | 'gitlab' | 'custom';

export type SubscriptionState = 'active' | 'paused';

/** Delivery targets of DESIGN §2.4: registered in delivery/targets.ts, their kinds named there. */
import type { TargetKind } from './delivery/targets';

export type { TargetKind };

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
  /** Payload filter expressions that must all hold (issue 17). */
  filters?: string[];
  /** `none`: the rendered template is delivered as is, without the agent. */
  agent?: 'none';
  /** Per-subscription agent settings overriding `agent.*`. */
  model?: string;
  max_steps?: number;
  timeout_ms?: number;
  max_tokens?: number;
  /** Daily token budget of this subscription. */
  daily_tokens?: number;
  /** Agent runs per hour beyond which events are recorded `rate_limited`. */
  max_runs_per_hour?: number;
  /** Runs only the latest event of a burst per subject, after this many seconds (at most 900). */
  debounce_seconds?: number;
  /** Code-host comments: one edited comment per subject (default for pull/merge requests) or a new one per event. */
  comment_mode?: 'sticky' | 'new';
  /**
   * When `update` last changed its event filters or payload filters: a held event that
   * arrived before it is checked against them again when it is released (held-settle.ts).
   */
  routing_changed_at?: string;
  /**
   * Set by `update` when it shortens or turns off debounce: until then, events queued under
   * the old window may still wait, and ingest records each later event as its subject's
   * latest (without delaying it) so they are superseded (ingest/debounce.ts).
   */
  debounce_pointer_until?: string;
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
  /**
   * Sent by reference (`EventQueue.sendRecorded` over SQS): the message proper, payload
   * included, is its event record's in the event log, and the worker reads it from there.
   */
  recorded?: true;
  /** Set by `replay`: a new attempt of an event that already ran. */
  replay_of?: string;
  /** The stable key of what the event is about (PR, issue, commit, alert group), for debounce. */
  subject_key?: string;
  /**
   * The `created_at` of the subscription it was accepted for: a subscription deleted and
   * created again under the same name is another one, and does not take its events.
   */
  subscription_created_at?: string;
}

export type EventStatus =
  | 'held' | 'queued' | 'processing' | 'delivered' | 'suppressed' | 'failed'
  /** Debounce: a later event of the same subject replaced it (`superseded_by`). */
  | 'superseded'
  /** Beyond the subscription's max_runs_per_hour; replayable. */
  | 'rate_limited'
  /** The daily token budget was spent; nothing was called. */
  | 'over_budget'
  /** Never accepted: the request that recorded it died or was refused before the event was queued. */
  | 'abandoned';

/** Tokens and steps of one agent run. */
export interface AgentUsage {
  provider: string;
  model?: string;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens?: number;
  cache_write_tokens?: number;
  steps: number;
  tool_calls?: Array<{ name: string; ms: number; bytes: number; ok: boolean }>;
  /** Some of the tokens are hookagent's estimate: the provider reported none for a turn (agent/estimate.ts). */
  estimated?: true;
  /**
   * When the latest run that spent tokens ended (ISO 8601): the time the daily budget charged
   * them at, which `webhook usage --since` selects on. Absent in records written before it.
   */
  spent_at?: string;
}

/** Outcomes of the request log (DESIGN §2.1, issue 17). */
export type RequestOutcome =
  | 'accepted' | 'held' | 'duplicate' | 'not_handled' | 'filtered' | 'ignored_loop' | 'ping'
  | 'rejected_signature' | 'ip_not_allowed' | 'payload_too_large' | 'invalid_json' | 'invalid_event'
  | 'not_found' | 'method_not_allowed' | 'unavailable' | 'in_progress';

/** Why one candidate subscription did or did not take a request. */
export interface CandidateVerdict {
  subscription: string;
  matched: boolean;
  /** e.g. `event filter pull_request.opened does not match push`, `filter "x == 1" failed`, `paused`. */
  reason: string;
}

/** One entry of the request log. */
export interface RequestRecord {
  request_id: string;
  received_at: string;
  /** `github`, `gitlab` or `custom/<name>`. */
  endpoint: string;
  method: string;
  status: number;
  outcome: RequestOutcome;
  event?: string;
  action?: string;
  delivery_id?: string;
  event_id?: string;
  source_ip?: string;
  /** Header names only: never values. */
  header_names: string[];
  candidates?: CandidateVerdict[];
  /** Candidate verdicts not kept: event-filter misses past 100, and routed ones past 200 (ingest/request-candidates.ts). */
  candidates_omitted?: number;
  /** The error message answered, for rejections. */
  message?: string;
  /** Rejections are sampled under a flood: how many similar ones this entry stands for. */
  count?: number;
}

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
  /** Debounce: the event that replaced this one. */
  superseded_by?: string;
  /** The agent run's tokens and steps (issue 19). */
  usage?: AgentUsage;
  /** Where the agent's transcript is kept (PayloadStore pointer), or the transcript itself when small. */
  transcript_ref?: string;
  /** Where the whole reply is kept (PayloadStore pointer) when `reply` holds only what fits the record: a retry delivers it whole. */
  reply_ref?: string;
  /** When the worker sent the message of this failed record to the dead-letter queue. */
  dead_lettered_at?: string;
  /** The model the agent ran with (the subscription's `model`, else `agent.model`) (issue 17). */
  model?: string;
  /**
   * The UTC hour (`2026-11-24T10`) `max_runs_per_hour` counted this event's run in; absent
   * while it is not counted (a retry counts it then, once) or after it was given back.
   */
  run_counted?: string;
}

/** A record without its message, prompt and reply (the kilobytes): what a sweep over many records decides on. */
export type EventSummary = Omit<EventRecord, 'message' | 'prompt' | 'reply'>;
