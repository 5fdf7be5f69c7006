/** `--max-tokens` and `--daily-tokens` of subscribe/update: whole numbers in range, or `none` to clear. */
import { HookError } from '../../functions/core/errors';
import type { Subscription } from '../../functions/core/types';

function parseLimit(option: string, value: string, min: number, max: number): number | undefined {
  if (value.trim().toLowerCase() === 'none') return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < min || n > max) throw new HookError('invalid_option', `--${option} must be a whole number from ${min} to ${max}, or none; got '${value}'`);
  return n;
}

export function applyTokenLimits(subscription: Subscription, fields: { maxTokens?: string; dailyTokens?: string }): void {
  if (fields.maxTokens !== undefined) {
    const n = parseLimit('max-tokens', fields.maxTokens, 16, 200_000);
    if (n === undefined) delete subscription.max_tokens;
    else subscription.max_tokens = n;
  }
  if (fields.dailyTokens !== undefined) {
    const n = parseLimit('daily-tokens', fields.dailyTokens, 1, 1_000_000_000);
    if (n === undefined) delete subscription.daily_tokens;
    else subscription.daily_tokens = n;
  }
}
