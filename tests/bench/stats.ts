/** One benchmark figure: always measured, never made up; `met` compares it with its target. */
export interface Measurement {
  name: string;
  value: number;
  unit: string;
  target: string;
  met: boolean;
  /** What the figure is compared with, measured in the same run (a ratio's floor), in words and figures. */
  floor?: string;
  detail?: Record<string, unknown>;
}

export function median(values: number[]): number {
  if (values.length === 0) throw new Error('no samples: the measurement could not be taken');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) throw new Error('no samples: the measurement could not be taken');
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}
