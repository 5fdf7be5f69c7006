/**
 * The metrics port as CloudWatch Embedded Metric Format, through Powertools Metrics: one
 * JSON document per dimension set on stdout at each flush, which CloudWatch turns into
 * metrics (namespace `hookagent`, dimensions service and stage plus the point's own).
 */
import { Metrics as PowertoolsMetrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Dimensions, MetricName, Metrics, MetricUnit as Unit } from '../core/metrics/metrics';

const UNITS: Record<Unit, (typeof MetricUnit)[keyof typeof MetricUnit]> = { Count: MetricUnit.Count, Milliseconds: MetricUnit.Milliseconds };

export interface EmfMetrics extends Metrics {
  /** The `ColdStart` metric, once per container (Powertools' own). */
  coldStart(): void;
}

export function emfMetrics(serviceName: string, stage: string, namespace = process.env.POWERTOOLS_METRICS_NAMESPACE || 'hookagent'): EmfMetrics {
  // One Powertools instance per dimension set: points with the same dimensions aggregate into one document.
  const bySet = new Map<string, { metrics: PowertoolsMetrics; pending: boolean }>();
  const instance = (dimensions: Dimensions) => {
    const key = JSON.stringify(Object.entries(dimensions).sort(([a], [b]) => a.localeCompare(b)));
    let entry = bySet.get(key);
    if (!entry) {
      entry = { metrics: new PowertoolsMetrics({ namespace, serviceName, defaultDimensions: { stage, ...dimensions } }), pending: false };
      bySet.set(key, entry);
    }
    return entry;
  };
  return {
    add(name: MetricName, unit: Unit, value: number, dimensions: Dimensions = {}) {
      const entry = instance(dimensions);
      entry.metrics.addMetric(name, UNITS[unit], value);
      entry.pending = true;
    },
    flush() {
      for (const entry of bySet.values()) {
        if (!entry.pending) continue;
        entry.pending = false;
        entry.metrics.publishStoredMetrics();
      }
    },
    coldStart() {
      instance({}).metrics.captureColdStartMetric();
    },
  };
}
