/**
 * The metrics port: counts and durations with a few dimensions. The domain names what
 * happened; an adapter decides where it goes (CloudWatch EMF on Lambda, nothing locally).
 */
export type MetricUnit = 'Count' | 'Milliseconds';
export type Dimensions = Record<string, string>;

export interface Metrics {
  /** One data point; `dimensions` beyond the adapter's defaults (service, stage). */
  add(name: MetricName, unit: MetricUnit, value: number, dimensions?: Dimensions): void;
  /** Writes what was added since the last flush (once per invocation). */
  flush(): void;
}

/** Every metric hookagent emits (the alarms and the dashboard name them). */
export const METRIC = {
  /** Ingest: one per answered request; dimensions endpoint and outcome. */
  requests: 'Requests',
  /** Worker: from the event's arrival to the start of its first processing (ms). */
  queueToStart: 'QueueToStartLatency',
  /** Worker: one agent run (ms). */
  agentDuration: 'AgentDuration',
  /** Worker: an agent run that ended in an error. */
  agentFailures: 'AgentFailures',
  /** Worker: tokens of a run; dimensions model and kind (input, output). */
  tokens: 'Tokens',
  /** Worker: one per target attempt; dimensions target and outcome (delivered, failed). */
  deliveries: 'Deliveries',
  /** Worker: a message handed back to the queue for another attempt. */
  retries: 'Retries',
  /** Worker: a message sent to the dead-letter queue, or handed back on its last receive (the queue's redrive moves it). */
  deadLetters: 'DeadLetters',
} as const;
export type MetricName = (typeof METRIC)[keyof typeof METRIC];

export const noMetrics: Metrics = { add() {}, flush() {} };

/** Data points kept in memory, for tests and for `serve` later. */
export function memoryMetrics(): Metrics & { points: Array<{ name: MetricName; unit: MetricUnit; value: number; dimensions: Dimensions }> } {
  const points: Array<{ name: MetricName; unit: MetricUnit; value: number; dimensions: Dimensions }> = [];
  return { points, add: (name, unit, value, dimensions = {}) => void points.push({ name, unit, value, dimensions }), flush() {} };
}
