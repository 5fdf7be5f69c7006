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
    this.retryable = options.retryable ?? false;
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
