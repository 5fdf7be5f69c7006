/**
 * The contract between the worker and the delivery targets (DESIGN §2.4). The worker
 * decides what to deliver and records outcomes; each target only knows how to post one
 * reply to one destination.
 */
import type { Config } from '../config/types';
import type { Logger } from '../log';
import type { QueueMessage, Subscription, TargetKind } from '../types';

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
}

export type DeliveryOutcome =
  | { status: 'delivered'; detail?: string }
  /** `retryable`: a later attempt may succeed (5xx, network, timeout, rate limit); else permanent. */
  | { status: 'failed'; retryable: boolean; code: string; message: string; /** The API's asked-for wait before a retry (rate limits). */ retry_after_seconds?: number };

export interface DeliveryTarget {
  readonly kind: TargetKind;
  deliver(request: DeliveryRequest): Promise<DeliveryOutcome>;
}
