/**
 * Daily token budgets (`agent.budget.daily_tokens` over every subscription, and a
 * subscription's `daily_tokens`), kept in the CounterStore per UTC day. A run is refused
 * before the model is called once a budget is spent; the next UTC day starts at zero.
 * Every token the provider reports counts: input, output, cache reads and cache writes;
 * for a model call whose provider reported none, hookagent's estimate counts instead
 * (agent/estimate.ts: ~4 characters a token; the run's usage says `estimated: true`).
 */
import type { Config } from '../config/types';
import type { CounterStore } from '../ports';
import type { AgentUsage, Subscription } from '../types';

/** Counters live two days, so a day's total can be read until the next one ends. */
const COUNTER_TTL_SECONDS = 2 * 24 * 3600;

const day = (nowMs: number) => new Date(nowMs).toISOString().slice(0, 10);
export const globalBudgetKey = (nowMs: number) => `tokens#*#${day(nowMs)}`;
export const subscriptionBudgetKey = (subscription: string, nowMs: number) => `tokens#${subscription}#${day(nowMs)}`;

export function tokensOf(usage: AgentUsage): number {
  return usage.input_tokens + usage.output_tokens + (usage.cache_read_tokens ?? 0) + (usage.cache_write_tokens ?? 0);
}

/** Why the run must not start (a message for the event log), or undefined when within budget. */
export async function budgetRefusal(counters: CounterStore | undefined, agent: Config['agent'], subscription: Subscription, nowMs: number): Promise<string | undefined> {
  if (!counters) return undefined;
  const global = agent.budget?.daily_tokens;
  if (global !== undefined) {
    const spent = await counters.get(globalBudgetKey(nowMs));
    if (spent >= global) return `The daily token budget (agent.budget.daily_tokens: ${global}) is spent: ${spent} tokens used on ${day(nowMs)} (UTC); the model was not called`;
  }
  if (subscription.daily_tokens !== undefined) {
    const spent = await counters.get(subscriptionBudgetKey(subscription.name, nowMs));
    if (spent >= subscription.daily_tokens) return `The daily token budget of '${subscription.name}' (${subscription.daily_tokens}) is spent: ${spent} tokens used on ${day(nowMs)} (UTC); the model was not called`;
  }
  return undefined;
}

/** Adds a run's tokens to today's counters (always, so a budget set later sees the day so far). */
export async function chargeBudget(counters: CounterStore | undefined, subscription: string, usage: AgentUsage, nowMs: number): Promise<void> {
  const tokens = tokensOf(usage);
  if (!counters || tokens === 0) return;
  await Promise.all([counters.add(globalBudgetKey(nowMs), tokens, COUNTER_TTL_SECONDS), counters.add(subscriptionBudgetKey(subscription, nowMs), tokens, COUNTER_TTL_SECONDS)]);
}
