/** What the worker is wired with, and what it answers the queue per message (process.ts). */
import type { Config } from '../config/types';
import type { Logger } from '../log';
import type { Agent } from '../agent/agent';
import type { DeliveryTarget } from '../delivery/target';
import type { Clock, CounterStore, DeadLetterSink, DebounceStore, EventLog, LeaseStore, PayloadStore, SubscriptionStore } from '../ports';
import type { SkillSource } from '../skills/source';
import type { EventRecord, TargetKind } from '../types';
import type { Late } from './lease';

export interface WorkerDeps {
  events: EventLog;
  payloads: PayloadStore;
  subscriptions: SubscriptionStore;
  agent: Agent;
  skills: SkillSource;
  targets: Partial<Record<TargetKind, DeliveryTarget>>;
  /** Resolved `agent` and `delivery` sections. */
  config: Pick<Config, 'agent' | 'delivery'>;
  clock: Clock;
  logger: Logger;
  maxReceiveCount: number;
  /** Where permanently failed messages go at once; without it they are retried until the queue's redrive. */
  deadLetters?: DeadLetterSink;
  /** The worker lease per (event, subscription): without it two copies of a message may both run. */
  leases?: LeaseStore;
  /** How long a lease lasts (default: the agent timeout, the subscription's own when longer, + 10 delivery timeouts + 60 s). */
  leaseMs?: number;
  /**
   * Milliseconds left in this invocation (Lambda), when bounded: an agent run that could not
   * finish in them (the subscription's timeout + 3 delivery timeouts) is not started.
   */
  remainingMs?: () => number;
  /** Daily token budgets (issue 19) and max runs per hour (issue 17); without it neither is enforced. */
  counters?: CounterStore;
  /** Issue 17: debounce (latest event per subject), and an agent per subscription model. */
  debounce?: DebounceStore;
  agentFor?: (model: string) => Agent;
}

/**
 * `retry`: report the message as failed so the queue delivers it again (or dead-letters it);
 * `retryAfterMs` is the wait the other side asked for, when it said.
 */
export type MessageOutcome =
  | { kind: 'ack'; status: EventRecord['status'] | 'malformed' }
  | { kind: 'retry'; reason: string; retryAfterMs?: number; late?: Late };
