/**
 * Errors are values: a stable machine-readable code and a human message.
 * `HookError` carries one across an `await` boundary where throwing is the natural flow
 * (ports, adapters); domain functions return `Result` where the caller must branch.
 */
/**
 * Every error code hookagent raises or answers with: a closed family (tool errors are
 * `tool_<the code-host client's code>`). Their retryability, where it belongs to the code,
 * is in RETRYABLE below.
 */
export type ErrorCode =
  | 'abandoned' | 'agent_failed' | 'agent_max_steps' | 'agent_reply_empty' | 'agent_reply_filtered'
  | 'agent_reply_truncated' | 'agent_timeout' | 'auth_token_required' | 'auth_token_weak' | 'bad_answer'
  | 'bad_option' | 'bad_request' | 'bad_response' | 'cancelled' | 'channel_missing' | 'chat_id_missing'
  | 'comment_mode_invalid' | 'config_invalid' | 'delivery_failed' | 'empty_value' | 'event_invalid'
  | 'event_held' | 'event_not_found' | 'file_unreadable' | 'filter_invalid' | 'github_app_key' | 'github_app_token'
  | 'in_progress' | 'invalid_event_id' | 'invalid_name' | 'invalid_option' | 'invalid_since'
  | 'listen_failed' | 'misconfigured' | 'name_invalid' | 'no_deployment' | 'not_a_private_key'
  | 'not_deployed' | 'not_found' | 'nothing_to_comment' | 'over_budget' | 'payload_invalid'
  | 'payload_key_invalid' | 'payload_missing' | 'payload_pointer_invalid' | 'payload_too_large'
  | 'provider_auth' | 'provider_model' | 'provider_rate_limited' | 'provider_request' | 'provider_response'
  | 'provider_unavailable' | 'queue_rejected' | 'rate_limited' | 'receipt_invalid' | 'sample_unavailable'
  | 'secret_not_found' | 'service_unreachable' | 'skill_invalid' | 'skill_not_found' | 'store_busy'
  | 'store_damaged' | 'store_migration_failed' | 'store_migration_needed' | 'store_unavailable'
  | 'subscription_exists' | 'subscription_not_found' | 'target_invalid' | 'target_unavailable'
  | 'target_unconfigured' | 'template_invalid' | 'too_large' | 'tool_bad_answer' | 'tool_bad_input'
  | 'tool_http_error' | 'tool_no_change' | 'tool_redirect_refused' | 'tool_unavailable' | 'tool_unconfigured'
  | 'tool_url_refused' | 'unavailable' | 'unsupported' | 'usage_error' | 'value_invalid' | 'value_too_large'
  | `tool_${string}`;

export interface Failure {
  readonly code: ErrorCode;
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
export const RETRYABLE: Readonly<Partial<Record<ErrorCode, boolean>>> = {
  // Worth another attempt.
  unavailable: true, store_unavailable: true, store_busy: true, in_progress: true, provider_unavailable: true,
  provider_rate_limited: true, agent_timeout: true, service_unreachable: true, tool_unavailable: true,
  // Never.
  config_invalid: false, subscription_not_found: false, subscription_exists: false, skill_invalid: false, skill_not_found: false,
  payload_invalid: false, payload_missing: false, payload_too_large: false, payload_key_invalid: false, payload_pointer_invalid: false,
  provider_auth: false, provider_model: false, provider_request: false, agent_reply_empty: false, agent_reply_filtered: false,
  agent_reply_truncated: false, agent_max_steps: false, queue_rejected: false, receipt_invalid: false, store_damaged: false,
  store_migration_needed: false, tool_url_refused: false, tool_redirect_refused: false, tool_no_change: false, tool_unconfigured: false,
  bad_request: false, invalid_option: false, invalid_event_id: false, event_held: false, event_not_found: false, unsupported: false,
};

export class HookError extends Error implements Failure {
  readonly code: ErrorCode;
  /** True when the same operation may succeed later (throttling, a store or queue briefly down). */
  readonly retryable: boolean;
  /** How long the other side asked us to wait (a `Retry-After`), when it said. */
  readonly retryAfterMs: number | undefined;

  constructor(code: ErrorCode, message: string, options: { retryable?: boolean; cause?: unknown; retryAfterMs?: number } = {}) {
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
