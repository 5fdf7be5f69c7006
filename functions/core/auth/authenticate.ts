/** Which schemes each endpoint accepts, and with which secrets (DESIGN §2.2). */
import type { Source } from '../types';
import {
  basicPassword, bearerToken, verifyHexHmacList, verifyHubSignature, verifyStandardWebhooks, verifyToken, type Headers, type RawBody,
} from './signatures';

export type AuthScheme =
  | 'hub-signature' | 'gitlab-token' | 'standard-webhooks' | 'bearer' | 'basic' | 'pagerduty-signature' | 'grafana-signature';

export type AuthOutcome =
  | { ok: true; scheme: AuthScheme }
  | { ok: false; reason: string };

/**
 * Checks a request's credentials. `secrets` empty = nothing configured = refused
 * (fail closed). Reasons are for the service log only; the sender gets one message.
 */
export function authenticate(source: Source, body: RawBody, headers: Headers, secrets: readonly string[], nowMs: number): AuthOutcome {
  if (secrets.length === 0) return { ok: false, reason: `no secret is configured for the ${source} endpoint` };
  if (source === 'github') {
    if (verifyHubSignature(body, headers['x-hub-signature-256'], secrets)) return { ok: true, scheme: 'hub-signature' };
    return { ok: false, reason: headers['x-hub-signature-256'] ? 'X-Hub-Signature-256 does not match' : 'X-Hub-Signature-256 is missing' };
  }
  const standard = verifyStandardWebhooks(body, headers, secrets, nowMs);
  if (standard === 'valid') return { ok: true, scheme: 'standard-webhooks' };
  // A verified signature outside ±5 minutes is a replay or a clock far off: refused whatever else the request carries.
  if (standard === 'stale') return { ok: false, reason: 'webhook-timestamp is more than 5 minutes from now' };

  if (source === 'gitlab') {
    if (verifyToken(headers['x-gitlab-token'], secrets)) return { ok: true, scheme: 'gitlab-token' };
    if (standard === 'invalid') return { ok: false, reason: 'webhook-signature does not match' };
    return { ok: false, reason: headers['x-gitlab-token'] ? 'X-Gitlab-Token does not match' : 'X-Gitlab-Token is missing' };
  }
  if (verifyHubSignature(body, headers['x-hub-signature-256'], secrets)) return { ok: true, scheme: 'hub-signature' };
  if (verifyToken(bearerToken(headers.authorization), secrets)) return { ok: true, scheme: 'bearer' };
  if (verifyToken(basicPassword(headers.authorization), secrets)) return { ok: true, scheme: 'basic' };
  if (verifyHexHmacList(body, headers['x-pagerduty-signature'], secrets, 'v1=')) return { ok: true, scheme: 'pagerduty-signature' };
  if (verifyHexHmacList(body, headers['x-grafana-alerting-signature'], secrets, '')) return { ok: true, scheme: 'grafana-signature' };
  return {
    ok: false,
    reason: standard === 'invalid'
      ? 'webhook-signature does not match'
      : 'no valid webhook-signature, X-Hub-Signature-256, Authorization, X-PagerDuty-Signature or X-Grafana-Alerting-Signature',
  };
}
