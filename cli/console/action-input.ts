/**
 * What a console POST asks for, checked before anything runs. The body is empty or a JSON
 * object, and each option present has its type: a wrong one is refused, never read as
 * absent (a replay's `"subscription": ["alerts"]` replayed for every subscription, and a
 * `null` body answered 500: hunt 8 D4).
 */
import { HookError } from '../../functions/core/errors';
import { SUBSCRIPTION_NAME_PATTERN } from '../../functions/core/types';
import type { LifecycleAction } from './lifecycle';

/** The body's options; undefined when the body is neither empty nor a JSON object. */
export function bodyOptions(body: string): Record<string, unknown> | undefined {
  if (!body.trim()) return {};
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

const shown = (value: unknown): string => JSON.stringify(value).slice(0, 80);

/** The action a POST path names, its options checked (HookError bad_request); undefined when the path names none. */
export function actionFor(path: string, options: Record<string, unknown>): LifecycleAction | undefined {
  let match = /^\/subscriptions\/([^/]+)\/(pause|resume)$/.exec(path);
  if (match) {
    const name = decodeURIComponent(match[1]!);
    if (match[2] === 'pause') return { kind: 'pause', name };
    const discard = options.discard_held;
    if (discard !== undefined && typeof discard !== 'boolean') throw new HookError('bad_request', `'discard_held' must be true or false, got ${shown(discard)}`);
    return { kind: 'resume', name, discardHeld: discard === true };
  }
  match = /^\/events\/([^/]+)\/replay$/.exec(path);
  if (match) {
    const subscription = options.subscription;
    if (subscription !== undefined && (typeof subscription !== 'string' || !SUBSCRIPTION_NAME_PATTERN.test(subscription))) {
      throw new HookError('bad_request', `'subscription' must be a subscription name (lower-case letters, digits, '-' and '_'), or left out to replay for every subscription that has the event; got ${shown(subscription)}`);
    }
    return { kind: 'replay', eventId: decodeURIComponent(match[1]!), ...(subscription !== undefined ? { subscription } : {}) };
  }
  return undefined;
}
