/**
 * GitHub App identity through @octokit/auth-app: it signs the App's JWT and exchanges it
 * at `POST {api_url}/app/installations/{id}/access_tokens` for an installation token,
 * one exchange at a time per installation. The installation id comes from the event's
 * `installation.id`. Tokens are kept here, not in auth-app's own cache, because that one
 * keeps every token 59 minutes whatever its `expires_at` says: here a token is dropped
 * five minutes before it expires, or when GitHub refuses it (`forgetInstallationToken`).
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

/**
 * The key the JWT signer gets: the configured key as node:crypto reads it, written out as
 * plain PKCS#8 PEM, the one form universal-github-app-jwt imports (it cuts the PEM by lines,
 * so text around the block, such as the "Bag Attributes" openssl pkcs12 writes, broke it).
 * Undefined for anything RS256 cannot sign with: the check before any request and the
 * signer read the key the same way.
 */
export function signingKey(pem: string): string | undefined {
  try {
    const key = createPrivateKey(normalisePem(pem));
    return key.asymmetricKeyType === 'rsa' ? key.export({ type: 'pkcs8', format: 'pem' }).toString() : undefined;
  } catch {
    return undefined;
  }
}

/** True when the configured key can sign the App's JWT (checked before any request, for a clear failure). */
export function usablePrivateKey(pem: string): boolean {
  return signingKey(pem) !== undefined;
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
  // An unusable key never signs: github-client.ts refuses it (github_app_key) before any request.
  const privateKey = signingKey(app.private_key) ?? normalisePem(app.private_key);
  return { appId: app.app_id, privateKey, installationId, cache: tokenCache(`${apiUrl}|${app.app_id}`, now) };
}

/**
 * Drops the installation's cached token after GitHub refused it (401): the next request
 * exchanges a fresh one. A token made after the refused request started is kept: another
 * call's renewal made it. The key is auth-app's for an installation token with no
 * repository or permission limits, the only kind hookagent asks for.
 */
export function forgetInstallationToken(apiUrl: string, appId: string, installationId: number, refusedRequestStartedAt: number): void {
  const key = `${apiUrl}|${appId}|${installationId}`;
  const createdAt = Date.parse(tokens.get(key)?.split('|')[1] ?? '');
  if (!(createdAt >= refusedRequestStartedAt)) tokens.delete(key);
}

/** Tests only: forget cached tokens. */
export function clearInstallationTokens(): void {
  tokens.clear();
}
