/**
 * serve's console link as a user takes it: from the `console:` line of serve's start banner
 * (`http://127.0.0.1:<port>/console?token=<token>`). serve's console always asks for it.
 */
import type { Serve } from '../support/serve';

export interface ServeConsole {
  /** The banner's URL, token included: open it once, then /console answers with the cookie it set. */
  link: string;
  token: string;
  /** For scripts: what `fetch` sends instead of the cookie. */
  headers: { authorization: string };
}

export function serveConsole(serve: Serve): ServeConsole {
  const match = /console: (http:\/\/127\.0\.0\.1:\d+\/console\?token=([0-9a-f]{32,}))/.exec(serve.output());
  if (!match) throw new Error(`serve's banner names no console link:\n${serve.output()}`);
  return { link: match[1]!, token: match[2]!, headers: { authorization: `Bearer ${match[2]!}` } };
}
