/**
 * The contract between the worker and the delivery targets (DESIGN §2.4). The worker
 * decides what to deliver and records outcomes; each target only knows how to post one
 * reply to one destination.
 */
import type { Config } from '../config/types';
import type { Logger } from '../log';
import type { LeaseStore } from '../ports';
import type { QueueMessage, Subscription } from '../types';

export interface DeliveryRequest {
  subscription: Subscription;
  message: QueueMessage;
  /** The event payload (already read from the PayloadStore when it travelled by pointer). */
  payload: Record<string, unknown>;
  /** The agent's reply, not [SILENT]. */
  reply: string;
  /** Resolved `delivery` section of the configuration. */
  settings: Config['delivery'];
  logger: Logger;
  /**
   * Set when an earlier attempt may already have posted this reply without its outcome
   * being recorded (the queue gave the message again, or its record kept a reply from an
   * earlier attempt: a kill -9 or a Lambda timeout mid-post). A target that can search
   * for what it posts (Slack with a bot token) looks first. `since`: no earlier attempt
   * posted before this (ISO 8601: the event's arrival). Absent on a first attempt: no search.
   */
  earlierAttempt?: { since: string };
}

export type DeliveryOutcome =
  | { status: 'delivered'; detail?: string }
  /** `retryable`: a later attempt may succeed (5xx, network, timeout, rate limit); else permanent. `retryAfterMs`: the wait the API asked for. */
  | { status: 'failed'; retryable: boolean; code: string; message: string; retryAfterMs?: number };

export interface DeliveryTarget {
  /** One of TargetKind (delivery/targets.ts), which is derived from the registered modules. */
  readonly kind: string;
  /**
   * A second delivery of the same reply would be seen twice: nothing in what was posted lets
   * a later attempt find it (a chat message, unlike a comment's marker). The worker records
   * such a target's outcome the moment it lands, before anything else.
   */
  readonly unrepeatable?: boolean;
  deliver(request: DeliveryRequest): Promise<DeliveryOutcome>;
}

/**
 * A delivery target as the service registers it (delivery/targets.ts lists them): its
 * kind, the config section it needs (`subscribe` names it when missing), and how to build
 * it over the resolved `delivery` settings. Adding a target is a module exporting one of
 * these and one line in that list.
 */
export interface TargetModule<K extends string = string> {
  readonly kind: K;
  /** The config key to add when this target cannot work with `config` (and the subscription's events), else undefined. */
  missingConfig(config: Config, events: readonly string[]): string | undefined;
  create(settings: Config['delivery'], http: TargetHttp, stores: TargetStores): DeliveryTarget;
}

/** Stores targets share across workers (serve's slots, Lambda containers), given where the targets are composed. */
export interface TargetStores {
  /** Serialises a sticky comment's find-then-create/edit per (subscription, subject): codehost-comment.ts. */
  leases?: LeaseStore;
}

/** What targets share for their HTTP calls (timeouts, and a sleep and bounded waits for tests). */
export interface TargetHttp {
  timeoutMs: number;
  sleep?: (ms: number) => Promise<void>;
  maxWaitMs?: number;
}
