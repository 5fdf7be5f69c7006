/**
 * Errors are values: a stable machine-readable code and a human message.
 * `HookError` carries one across an `await` boundary where throwing is the natural flow
 * (ports, adapters); domain functions return `Result` where the caller must branch.
 */
export interface Failure {
  readonly code: string;
  readonly message: string;
}

export type Result<T, F extends Failure = Failure> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: F };

export const ok = <T>(value: T): Result<T, never> => ({ ok: true, value });
export const fail = <F extends Failure>(error: F): Result<never, F> => ({ ok: false, error });

/**
 * The codes whose retryability is a property of the code itself, in one place: a store,
 * queue or provider that is briefly unavailable is worth another attempt; a refused
 * value, a missing subscription or a reply that must not be posted never is. A HookError
 * with one of these codes always has this retryability, whatever its thrower says;
 * other codes (tool and provider answers classified by their HTTP status) say it
 * themselves, defaulting to permanent.
 */
export const RETRYABLE: Readonly<Record<string, boolean>> = {
  // Worth another attempt.
  unavailable: true, store_unavailable: true, store_busy: true, in_progress: true, provider_unavailable: true,
  provider_rate_limited: true, agent_timeout: true, service_unreachable: true, tool_unavailable: true,
  // Never.
  config_invalid: false, subscription_not_found: false, subscription_exists: false, skill_invalid: false, skill_not_found: false,
  payload_invalid: false, payload_missing: false, payload_too_large: false, payload_key_invalid: false, payload_pointer_invalid: false,
  provider_auth: false, provider_model: false, provider_request: false, agent_reply_empty: false, agent_reply_filtered: false,
  agent_reply_truncated: false, agent_max_steps: false, queue_rejected: false, receipt_invalid: false, store_damaged: false,
  store_migration_needed: false, tool_url_refused: false, tool_redirect_refused: false, tool_no_change: false, tool_unconfigured: false,
  bad_request: false, invalid_option: false, invalid_event_id: false, event_not_found: false, unsupported: false,
};

export class HookError extends Error implements Failure {
  readonly code: string;
  /** True when the same operation may succeed later (throttling, a store or queue briefly down). */
  readonly retryable: boolean;
  /** How long the other side asked us to wait (a `Retry-After`), when it said. */
  readonly retryAfterMs: number | undefined;

  constructor(code: string, message: string, options: { retryable?: boolean; cause?: unknown; retryAfterMs?: number } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HookError';
    this.code = code;
    this.retryable = RETRYABLE[code] ?? options.retryable ?? false;
    this.retryAfterMs = options.retryAfterMs;
  }
}

export function isHookError(value: unknown): value is HookError {
  return value instanceof HookError;
}

/** A short description of any thrown value, safe for logs (no stack, no payload). */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
