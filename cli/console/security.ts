/**
 * The console's guards: loopback Host names (against DNS rebinding), an access token
 * (required off loopback, and always on serve's port), a per-session CSRF token on every
 * state-changing action, and response headers that keep the page to itself.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const SESSION_COOKIE = 'hookagent_console_session';
/** The auth cookies' common prefix: each key adds its own suffix (ConsoleGuard.authCookieName). */
const AUTH_COOKIE_PREFIX = 'hookagent_console_auth_';

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

export function isLoopbackHost(host: string): boolean {
  return host === '127.0.0.1' || host === '::1' || host === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export function isLoopbackPeer(address: string | undefined): boolean {
  return !!address && (address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.'));
}

/** A cookie value %-decoded; as sent when it is not valid %-encoding. */
function cookieValue(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * The request's cookies. Cookies are not kept apart by port: another app on localhost
 * (`progress=100%`) sends its own here too, and one it did not encode must not make every
 * request fail (it answered 400 to every page load: hunt 8 D5).
 */
export function cookies(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0) out[part.slice(0, at).trim()] = cookieValue(part.slice(at + 1).trim());
  }
  return out;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The Host header names this machine's loopback (any port). */
export function hostIsLoopback(req: IncomingMessage): boolean {
  const host = (req.headers.host ?? '').toLowerCase();
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0] ?? '';
  // Any 127.0.0.0/8 address is loopback (`hookagent console --host 127.0.0.2` names one); DNS rebinding needs a name.
  return LOOPBACK_NAMES.has(name) || /^127(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(name);
}

export class ConsoleGuard {
  /**
   * The auth cookie's name, its own per key (so per token): browsers keep cookies by host
   * and path, not by port, and one name for every console on 127.0.0.1 made opening a second
   * one's link log the first out (hunt 11 D3). Not the port: serve's changes across restarts
   * while its token and cookie stay.
   */
  readonly authCookieName: string;

  /** `key` keys the CSRF and auth cookie digests: per process unless the caller keeps one (serve, so its cookie survives a restart). */
  constructor(private readonly authToken: string | undefined, private readonly key: Buffer = randomBytes(32)) {
    this.authCookieName = `${AUTH_COOKIE_PREFIX}${createHmac('sha256', key).update('cookie-name').digest('hex').slice(0, 8)}`;
  }

  get needsToken(): boolean {
    return this.authToken !== undefined;
  }

  newSession(): string {
    return randomBytes(24).toString('base64url');
  }

  csrfFor(session: string): string {
    return createHmac('sha256', this.key).update(`csrf:${session}`).digest('base64url');
  }

  /** What the auth cookie holds: a keyed digest of the token, never the token itself. */
  authCookieValue(): string {
    return createHmac('sha256', this.key).update(`auth:${this.authToken ?? ''}`).digest('base64url');
  }

  tokenMatches(candidate: string): boolean {
    return this.authToken !== undefined && same(candidate, this.authToken);
  }

  authorized(req: IncomingMessage): boolean {
    if (this.authToken === undefined) return true;
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (bearer && this.tokenMatches(bearer.trim())) return true;
    // Only its own: another console's cookie (or one of an earlier version's single name) is left alone.
    const cookie = cookies(req)[this.authCookieName];
    return cookie !== undefined && same(cookie, this.authCookieValue());
  }

  /** A state-changing request carries its session's CSRF token, from this origin. */
  csrfValid(req: IncomingMessage): boolean {
    const session = cookies(req)[SESSION_COOKIE];
    const token = req.headers['x-csrf-token'];
    if (!session || typeof token !== 'string' || !same(token, this.csrfFor(session))) return false;
    const origin = req.headers.origin;
    if (origin === undefined) return true;
    try {
      return new URL(origin).host === req.headers.host;
    } catch {
      return false;
    }
  }
}

export function securityHeaders(nonce?: string): Record<string, string> {
  const scripts = nonce ? `'nonce-${nonce}'` : "'none'";
  return {
    'content-security-policy': `default-src 'none'; script-src ${scripts}; style-src ${scripts}; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cache-control': 'no-store',
  };
}
