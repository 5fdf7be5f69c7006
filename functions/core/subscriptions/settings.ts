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

/** How much of a long filter the error echoes around its column. */
const CARET_WINDOW = 80;

/** The filter (or, when long, a window of it around the column) with a caret under the column. */
export function caretLines(text: string, column: number): string {
  const at = Math.max(0, column - 1);
  if (text.length <= 120) return `\n  ${text}\n  ${' '.repeat(at)}^`;
  const start = Math.max(0, Math.min(at - CARET_WINDOW / 2, text.length - CARET_WINDOW));
  const end = Math.min(text.length, start + CARET_WINDOW);
  const lead = start > 0 ? '…' : '';
  return `\n  ${lead}${text.slice(start, end)}${end < text.length ? '…' : ''}\n  ${' '.repeat(lead.length + at - start)}^`;
}

/** Parses every filter; the error shows the filter with a caret under the column. */
export function validateFilters(filters: string[]): Result<string[]> {
  try {
    parseFilters(filters);
    return ok(filters);
  } catch (error) {
    if (error instanceof FilterSyntaxError) return fail({ code: 'filter_invalid', message: `${error.message}${caretLines(error.text, error.column)}` });
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

/** Any spelling of zero (`0`, `0s`, `0m`, `0.0h`) turns debounce off, as does an empty value. */
const ZERO_DURATION = /^0+(?:\.0+)?\s*(?:ms|s|m|h)?$/;

/**
 * `--debounce`: whole seconds (SQS delays are), so `1.5s` is refused rather than stored as
 * another value; 0 means off.
 */
export function debounceSeconds(value: string): Result<number> {
  const text = value.trim();
  if (text === '' || ZERO_DURATION.test(text)) return ok(0);
  const ms = parseDuration(text);
  if (ms === undefined || ms < 1000 || ms > MAX_DEBOUNCE_SECONDS * 1000) {
    return fail({ code: 'value_invalid', message: `--debounce must be a duration such as 30s, 2m or 90s, from 1s to 15m (the longest SQS delay), or 0 to turn it off, not ${JSON.stringify(value)}` });
  }
  if (ms % 1000 !== 0) {
    const lower = Math.floor(ms / 1000);
    return fail({ code: 'value_invalid', message: `--debounce takes whole seconds, not ${JSON.stringify(value)}: write ${lower}s or ${lower + 1}s` });
  }
  return ok(ms / 1000);
}

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
    const seconds = debounceSeconds(input.debounce);
    if (!seconds.ok) return seconds;
    if (seconds.value === 0) clear('debounce_seconds');
    else out.debounce_seconds = seconds.value;
  }
  return ok(out);
}
