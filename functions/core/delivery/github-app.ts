/**
 * GitHub App identity: a JWT signed with the App's private key (RS256, `iss` = App id,
 * 10 minutes at most) is exchanged at `POST {api_url}/app/installations/{id}/access_tokens`
 * for an installation token (1 hour), cached per (api_url, App, installation) until five
 * minutes before it expires. The installation id comes from the event's
 * `installation.id`. node:crypto signs the JWT: @octokit/auth-app is ESM-only, which the
 * project's CommonJS test and bundle setup on Node 20 cannot load (see docs/readme/18.md).
 */
import { createPrivateKey, createSign } from 'node:crypto';
import { deliveryRequest, type HttpOptions } from './http';

export interface GithubAppSettings {
  app_id: string;
  private_key: string;
}

interface Cached { token: string; expiresAt: number }

const cache = new Map<string, Cached>();
const pending = new Map<string, Promise<InstallationToken>>();
/** Refresh this long before GitHub's `expires_at`. */
export const REFRESH_BEFORE_MS = 5 * 60_000;

export type InstallationToken = { ok: true; token: string } | { ok: false; failure: { status: 'failed'; retryable: boolean; code: string; message: string } };

const b64url = (value: Buffer | string) => Buffer.from(value).toString('base64url');

/** Environment variables often carry a PEM with literal `\n`: accept both forms. */
export function normalisePem(pem: string): string {
  return pem.includes('\\n') && !pem.includes('\n') ? pem.replace(/\\n/g, '\n') : pem;
}

/** The App's JWT: issued 60 s in the past (clock drift, as GitHub advises), valid 9 minutes. */
export function appJwt(settings: GithubAppSettings, nowMs = Date.now()): string {
  const now = Math.floor(nowMs / 1000);
  const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const payload = b64url(JSON.stringify({ iat: now - 60, exp: now + 540, iss: String(settings.app_id) }));
  const key = createPrivateKey(normalisePem(settings.private_key));
  const signature = createSign('RSA-SHA256').update(`${header}.${payload}`).sign(key);
  return `${header}.${payload}.${b64url(signature)}`;
}

/** The installation id an event names (`installation.id`), if any. */
export function installationIdOf(payload: Record<string, unknown>): number | undefined {
  const id = (payload.installation as { id?: unknown } | undefined)?.id;
  return typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

export async function installationToken(apiUrl: string, settings: GithubAppSettings, installationId: number, http: Omit<HttpOptions, 'api'>, now: () => number = Date.now): Promise<InstallationToken> {
  const key = `${apiUrl}|${settings.app_id}|${installationId}`;
  const cached = cache.get(key);
  if (cached && cached.expiresAt - REFRESH_BEFORE_MS > now()) return { ok: true, token: cached.token };
  // One exchange at a time per installation: concurrent deliveries share it.
  const inflight = pending.get(key);
  if (inflight) return inflight;
  const exchange = (async (): Promise<InstallationToken> => {
    let jwt: string;
    try {
      jwt = appJwt(settings, now());
    } catch {
      return { ok: false, failure: { status: 'failed', retryable: false, code: 'github_app_key', message: 'delivery.codehost.github.app.private_key is not a usable PEM private key' } };
    }
    const answer = await deliveryRequest(`${apiUrl}/app/installations/${installationId}/access_tokens`, {
      method: 'POST', redirect: 'manual',
      headers: { authorization: `Bearer ${jwt}`, accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28', 'user-agent': 'hookagent' },
    }, { ...http, api: 'GitHub (App installation token)' });
    if (!answer.ok) return answer;
    const body = JSON.parse(answer.body) as { token?: unknown; expires_at?: unknown };
    if (typeof body.token !== 'string') return { ok: false, failure: { status: 'failed', retryable: true, code: 'github_app_token', message: 'GitHub answered the installation token request without a token' } };
    const expiresAt = typeof body.expires_at === 'string' ? Date.parse(body.expires_at) : now() + 3_600_000;
    cache.set(key, { token: body.token, expiresAt: Number.isFinite(expiresAt) ? expiresAt : now() + 3_600_000 });
    return { ok: true, token: body.token };
  })();
  pending.set(key, exchange);
  try {
    return await exchange;
  } finally {
    pending.delete(key);
  }
}

/** Tests only: forget cached tokens. */
export function clearInstallationTokens(): void {
  cache.clear();
}
