/**
 * Validation of the issue-17 subscription fields: payload filters, direct delivery
 * (`--agent none`), per-subscription agent settings, max runs per hour and debounce.
 * Each problem is a Failure whose message says what to write instead.
 */
import { parseDuration } from '../config/formats';
import { fail, ok, type Result } from '../errors';
import { FilterSyntaxError, parseFilters } from '../filters/parse';
import type { Subscription } from '../types';

export const MAX_DEBOUNCE_SECONDS = 900;
export const MAX_AGENT_TIMEOUT_MS = 15 * 60_000;
export const MAX_STEPS = 50;
export const MAX_RUNS_PER_HOUR = 100_000;

/** Parses every filter; the error shows the filter with a caret under the column. */
export function validateFilters(filters: string[]): Result<string[]> {
  try {
    parseFilters(filters);
    return ok(filters);
  } catch (error) {
    if (error instanceof FilterSyntaxError) {
      const caret = error.text.length <= 120 ? `\n  ${error.text}\n  ${' '.repeat(error.column - 1)}^` : '';
      return fail({ code: 'filter_invalid', message: `${error.message}${caret}` });
    }
    throw error;
  }
}

/** The CLI's raw values of the issue-17 options (strings as typed; undefined = not given). */
export interface SettingsInput {
  filters?: string[];
  agent?: string;
  model?: string;
  maxSteps?: string;
  timeout?: string;
  maxRunsPerHour?: string;
  debounce?: string;
  /** The longest agent timeout the deployment can run (the worker's budget less deliveries). */
  maxTimeoutMs?: number;
}

type Settings = Pick<Subscription, 'filters' | 'agent' | 'model' | 'max_steps' | 'timeout_ms' | 'max_runs_per_hour' | 'debounce_seconds'>;

const integer = (value: string, option: string, min: number, max: number): Result<number> => {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < min || n > max) return fail({ code: 'value_invalid', message: `${option} must be a whole number from ${min} to ${max}, not ${JSON.stringify(value)}` });
  return ok(n);
};

const duration = (value: string, option: string, minMs: number, maxMs: number, shown: string): Result<number> => {
  const ms = parseDuration(value);
  if (ms === undefined || ms < minMs || ms > maxMs) {
    return fail({ code: 'value_invalid', message: `${option} must be a duration such as 30s, 2m or 90s, from ${minMs / 1000}s to ${shown}, not ${JSON.stringify(value)}` });
  }
  return ok(ms);
};

/**
 * Applies the given options over `base`; an empty value (`--model ""`, `--debounce 0`,
 * `--max-runs-per-hour 0`, `--agent default`, `--filter ""`) removes the setting.
 */
export function applySettings(base: Settings, input: SettingsInput): Result<Settings> {
  const out: Settings = { ...base };
  const clear = (key: keyof Settings) => delete out[key];
  if (input.filters !== undefined) {
    const filters = input.filters.filter((f) => f.trim() !== '');
    const checked = validateFilters(filters);
    if (!checked.ok) return checked;
    if (filters.length) out.filters = filters;
    else clear('filters');
  }
  if (input.agent !== undefined) {
    if (input.agent === 'none') out.agent = 'none';
    else if (input.agent === 'default' || input.agent === '') clear('agent');
    else return fail({ code: 'value_invalid', message: `--agent takes 'none' (deliver the rendered template without the agent) or 'default', not ${JSON.stringify(input.agent)}` });
  }
  if (input.model !== undefined) {
    const model = input.model.trim();
    if (model.length > 200 || /\s/.test(model)) return fail({ code: 'value_invalid', message: '--model is a provider model id (no spaces, at most 200 characters)' });
    if (model) out.model = model;
    else clear('model');
  }
  if (input.maxSteps !== undefined) {
    if (input.maxSteps.trim() === '') clear('max_steps');
    else {
      const n = integer(input.maxSteps, '--max-steps', 1, MAX_STEPS);
      if (!n.ok) return n;
      out.max_steps = n.value;
    }
  }
  if (input.timeout !== undefined) {
    if (input.timeout.trim() === '') clear('timeout_ms');
    else {
      const max = Math.min(MAX_AGENT_TIMEOUT_MS, input.maxTimeoutMs ?? MAX_AGENT_TIMEOUT_MS);
      const ms = duration(input.timeout, '--timeout', 1000, max, `${Math.floor(max / 1000)}s${max < MAX_AGENT_TIMEOUT_MS ? " (the worker's Lambda timeout less 3 × delivery.timeout)" : ''}`);
      if (!ms.ok) return ms;
      out.timeout_ms = ms.value;
    }
  }
  if (input.maxRunsPerHour !== undefined) {
    const n = integer(input.maxRunsPerHour, '--max-runs-per-hour', 0, MAX_RUNS_PER_HOUR);
    if (!n.ok) return n;
    if (n.value === 0) clear('max_runs_per_hour');
    else out.max_runs_per_hour = n.value;
  }
  if (input.debounce !== undefined) {
    if (input.debounce.trim() === '0' || input.debounce.trim() === '') clear('debounce_seconds');
    else {
      const ms = duration(input.debounce, '--debounce', 1000, MAX_DEBOUNCE_SECONDS * 1000, '15m (the longest SQS delay)');
      if (!ms.ok) return ms;
      out.debounce_seconds = Math.ceil(ms.value / 1000);
    }
  }
  return ok(out);
}
