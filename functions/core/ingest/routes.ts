/** The inbound URL space of DESIGN §2.1. */
import type { Source } from '../types';

export type Route =
  | { kind: 'health' }
  | { kind: 'webhook'; source: Source; name?: string }
  | { kind: 'custom-unnamed' }
  | { kind: 'not-found' };

export function parseRoute(path: string): Route {
  const clean = path.length > 1 ? path.replace(/\/+$/, '') : path;
  if (clean === '/health') return { kind: 'health' };
  if (clean === '/webhooks/github') return { kind: 'webhook', source: 'github' };
  if (clean === '/webhooks/gitlab') return { kind: 'webhook', source: 'gitlab' };
  if (clean === '/webhooks/custom') return { kind: 'custom-unnamed' };
  if (clean.startsWith('/webhooks/custom/')) {
    let name = clean.slice('/webhooks/custom/'.length);
    try {
      name = decodeURIComponent(name);
    } catch {
      // Keep the raw segment: it cannot match a subscription name anyway.
    }
    return { kind: 'webhook', source: 'custom', name };
  }
  return { kind: 'not-found' };
}

/** The methods a route answers, as the 405's Allow header lists them. */
export function allowedMethod(route: Route): string | undefined {
  // HEAD wherever GET is (RFC 9110 §9.3.2): uptime monitors probe /health with it.
  if (route.kind === 'health') return 'GET, HEAD';
  // Custom endpoints take PUT as POST: Grafana's webhook contact point lets users pick
  // either (`httpMethod`). GitHub and GitLab always POST, so PUT there is a mistake.
  if (route.kind === 'webhook') return route.source === 'custom' ? 'POST, PUT' : 'POST';
  return undefined;
}

export function methodAllowed(allow: string, method: string): boolean {
  return allow.split(', ').includes(method.toUpperCase());
}
