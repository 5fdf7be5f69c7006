/**
 * Ports: what the domain needs from the outside world. AWS adapters (functions/aws) and
 * local adapters implement them; the domain never imports an SDK.
 */
import type { EventRecord, EventStatus, QueueMessage, Subscription } from './types';

export interface SubscriptionStore {
  list(): Promise<Subscription[]>;
  get(name: string): Promise<Subscription | undefined>;
  /** Conditional create: throws HookError `subscription_exists` when the name is taken. */
  create(subscription: Subscription): Promise<void>;
  /** Replaces an existing subscription: throws HookError `subscription_not_found` when absent. */
  put(subscription: Subscription): Promise<void>;
  /** Throws HookError `subscription_not_found` when absent. */
  delete(name: string): Promise<void>;
}

export interface EventQueue {
  /** Sends every message durably, or throws (HookError `unavailable`). */
  send(messages: QueueMessage[]): Promise<void>;
}

export interface DedupStore {
  /** Records the key for `ttlSeconds`; false when it was already recorded and not yet expired. */
  claim(key: string, ttlSeconds: number): Promise<boolean>;
  /** Forgets the key, so a sender's retry is processed. */
  release(key: string): Promise<void>;
}

export interface EventLog {
  /** Writes new records (replacing any with the same event id and subscription). */
  putAll(records: EventRecord[]): Promise<void>;
  get(eventId: string, subscription: string): Promise<EventRecord | undefined>;
  /** Every record of one event (one per subscription). */
  getEvent(eventId: string): Promise<EventRecord[]>;
  /** Most recent first. */
  listBySubscription(subscription: string, limit: number): Promise<EventRecord[]>;
  /** Records of one subscription in one status, oldest first (arrival order). */
  listByStatus(subscription: string, status: EventStatus): Promise<EventRecord[]>;
  deleteAll(keys: Array<{ event_id: string; subscription: string }>): Promise<void>;
}

export interface PayloadStore {
  /** Stores a raw payload; returns a pointer to put in the queue message. */
  put(key: string, body: string): Promise<string>;
  get(pointer: string): Promise<string>;
}

export interface SecretSource {
  /** The value of a `${NAME}` reference, or undefined when it is not set anywhere. */
  get(name: string): Promise<string | undefined>;
  /** Where a missing value should be set, for error messages (e.g. the SSM parameter name). */
  where?(name: string): string;
}

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
