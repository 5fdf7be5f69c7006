/**
 * GitHub App identity through @octokit/auth-app: it signs the App's JWT and exchanges it
 * at `POST {api_url}/app/installations/{id}/access_tokens` for an installation token,
 * one exchange at a time per installation. The installation id comes from the event's
 * `installation.id`. Tokens are kept here, not in auth-app's own cache, because that one
 * keeps every token 59 minutes whatever its `expires_at` says: here a token is dropped
 * five minutes before it expires.
 */
import { createPrivateKey } from 'node:crypto';
import type { StrategyOptions } from '@octokit/auth-app';

export interface GithubAppSettings {
  app_id: string;
  private_key: string;
}

/** Refresh this long before GitHub's `expires_at`. */
export const REFRESH_BEFORE_MS = 5 * 60_000;
/** Installations whose tokens are kept at once (a few per deployment in practice). */
const MAX_TOKENS = 1000;

/** auth-app's cache entries (`token|createdAt|expiresAt|…`), keyed by api_url, App and auth-app's own key. */
const tokens = new Map<string, string>();

/** Environment variables often carry a PEM with literal `\n`: accept both forms. */
export function normalisePem(pem: string): string {
  return pem.includes('\\n') && !pem.includes('\n') ? pem.replace(/\\n/g, '\n') : pem;
}

/** True when the configured key is a private key node can read (checked before any request, for a clear failure). */
export function usablePrivateKey(pem: string): boolean {
  try {
    return createPrivateKey(normalisePem(pem)).type === 'private';
  } catch {
    return false;
  }
}

/** The installation id an event names (`installation.id`), if any. */
export function installationIdOf(payload: Record<string, unknown>): number | undefined {
  const id = (payload.installation as { id?: unknown } | undefined)?.id;
  return typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

/** The cache auth-app reads before each exchange: an entry close to its `expires_at` reads as absent. */
function tokenCache(prefix: string, now: () => number): NonNullable<StrategyOptions['cache']> {
  return {
    get(key: string) {
      // auth-app reads an empty string as "not cached".
      const entry = tokens.get(`${prefix}|${key}`);
      if (entry === undefined) return '';
      // An entry whose expiry cannot be read is treated as expired: one exchange too many, never a stale token.
      const expiresAt = Date.parse(entry.split('|')[2] ?? '');
      if (expiresAt - REFRESH_BEFORE_MS > now()) return entry;
      tokens.delete(`${prefix}|${key}`);
      return '';
    },
    set(key: string, value: string) {
      if (tokens.size >= MAX_TOKENS) tokens.delete(tokens.keys().next().value as string);
      tokens.set(`${prefix}|${key}`, value);
    },
  };
}

/** auth-app's options for one installation of the App on `apiUrl`. */
export function appAuthOptions(apiUrl: string, app: GithubAppSettings, installationId: number, now: () => number = Date.now): StrategyOptions {
  return { appId: app.app_id, privateKey: normalisePem(app.private_key), installationId, cache: tokenCache(`${apiUrl}|${app.app_id}`, now) };
}

/** Tests only: forget cached tokens. */
export function clearInstallationTokens(): void {
  tokens.clear();
}
