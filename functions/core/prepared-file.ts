/**
 * Reading a JSON file that packaging prepared beside a Lambda bundle (config/prepared.ts,
 * skills/prepared.ts): bounded, parsed, and each way it can fail told apart, so each
 * reader words its own refusal.
 */
import { readFileBounded } from './bounded-read';
import { isHookError } from './errors';

export type PreparedRead =
  | { ok: true; document: unknown }
  | { ok: false; failure: 'missing' | 'unreadable' | 'not_json'; detail: string; cause: unknown };

export function readPreparedJson(file: string, limit: number, what: string): PreparedRead {
  let text: string;
  try {
    text = readFileBounded(file, limit, what, `the most ${what} may hold`);
  } catch (error) {
    const missing = ((isHookError(error) ? error.cause : undefined) as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
    return { ok: false, failure: missing ? 'missing' : 'unreadable', detail: error instanceof Error ? error.message : String(error), cause: error };
  }
  try {
    return { ok: true, document: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, failure: 'not_json', detail: (error as Error).message, cause: error };
  }
}

export const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
