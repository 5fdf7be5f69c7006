/**
 * What stands between octokit and the network for GitHub: `guardedFetch`, octokit's
 * `request.fetch`, sends only to the api_url origin and path, never follows a redirect,
 * and bounds each request in time; `RefusedRequest` is how it says no.
 */

/** plugin-retry's retries for reads (3 attempts in all); writes use 0. */
export const READ_RETRIES = 2;

/**
 * A request refused or abandoned by hookagent itself. Named `AbortError` so that
 * @octokit/request passes it through unchanged and plugin-retry does not retry it.
 */
export class RefusedRequest extends Error {
  override readonly name = 'AbortError';
  constructor(readonly code: 'redirect_refused' | 'unsafe_path' | 'delivery_timeout', message: string) {
    super(message);
  }
}

/** `fetch` kept to `api`'s origin and path, `redirect: manual` with any 3xx refused, and a time limit per request. */
export function guardedFetch(api: URL, timeoutMs: number): typeof fetch {
  const basePath = api.pathname.replace(/\/+$/, '');
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    // Before anything is sent, so the Authorization header never reaches another origin.
    if (url.origin !== api.origin || (url.pathname !== basePath && !url.pathname.startsWith(`${basePath}/`))) {
      throw new RefusedRequest('unsafe_path', `GitHub: a request to ${url.origin === api.origin ? 'a path outside api_url' : 'another host'} was refused; no credentials were sent`);
    }
    const limit = AbortSignal.timeout(timeoutMs);
    let response: Response;
    try {
      response = await fetch(url, { ...init, redirect: 'manual', signal: init?.signal ? AbortSignal.any([init.signal, limit]) : limit });
    } catch (error) {
      if (limit.aborted) throw new RefusedRequest('delivery_timeout', `Delivery timeouts: GitHub did not answer within ${timeoutMs} ms (delivery.timeout)`);
      throw error;
    }
    if (response.status >= 300 && response.status < 400 && response.status !== 304) {
      await response.body?.cancel();
      throw new RefusedRequest('redirect_refused', `GitHub answered ${response.status} with a redirect; not followed, so the credentials stay with api_url`);
    }
    return response;
  };
}
