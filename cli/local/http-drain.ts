/**
 * How serve's HTTP side stops (SIGINT/SIGTERM) without cutting a request: the port closes
 * at once; requests being answered finish, their answers say `Connection: close`; a request
 * that still comes on a kept-alive connection is answered 503 with Retry-After (the caller
 * does that while `stopping`); idle connections are closed once no answer went out for
 * `lingerMs`. When the grace ends, what is left is closed here, before the store closes.
 *
 * Why not http.Server#close(): since Node 19 it also destroys every idle keep-alive
 * connection at once, and a client that just had an answer may already be sending its next
 * request on one (a back-to-back sender): that request is reset instead of answered.
 */
import type { Server, ServerResponse } from 'node:http';
import { Server as NetServer } from 'node:net';

/** How long a connection that just carried an answer may still bring a request (answered 503) before it is closed. */
export const LINGER_MS = 1_000;

export interface HttpDrain {
  /** True once `stop` began: a new request is refused (503), never taken. */
  readonly stopping: boolean;
  /** Every request's response, as it starts: once stopping, its connection closes after it. */
  track(res: ServerResponse): void;
  /** Stops; resolves when every connection is closed, at the latest when `graceMs` ends (the rest are closed then). */
  stop(graceMs: number): Promise<void>;
}

export function httpDrain(server: Server, lingerMs = LINGER_MS): HttpDrain {
  let stopping = false;
  let lastAnswerAt = 0;
  let lingering: NodeJS.Timeout | undefined;
  const answering = new Set<ServerResponse>();
  // Idle connections close once no answer went out for lingerMs: a client's next request is either answered or never sent.
  const closeQuietConnections = () => {
    if (lingering) return;
    const wait = lastAnswerAt + lingerMs - Date.now();
    if (wait <= 0) return server.closeIdleConnections();
    lingering = setTimeout(() => {
      lingering = undefined;
      closeQuietConnections();
    }, wait);
  };
  return {
    get stopping() {
      return stopping;
    },
    track(res) {
      answering.add(res);
      if (stopping) res.shouldKeepAlive = false;
      res.once('close', () => {
        answering.delete(res);
        lastAnswerAt = Date.now();
        // An answer whose headers went out before the stop said keep-alive: its connection is idle now.
        if (stopping) closeQuietConnections();
      });
    },
    async stop(graceMs) {
      stopping = true;
      for (const res of answering) if (!res.headersSent) res.shouldKeepAlive = false;
      // net.Server's close: stops listening and resolves once the last connection has closed.
      const closed = new Promise<void>((done) => NetServer.prototype.close.call(server, () => done()));
      closeQuietConnections();
      let graceTimer: NodeJS.Timeout | undefined;
      const graceEnded = new Promise<boolean>((done) => {
        graceTimer = setTimeout(() => done(true), graceMs);
      });
      const timedOut = await Promise.race([closed.then(() => false), graceEnded]);
      clearTimeout(graceTimer);
      clearTimeout(lingering);
      if (!timedOut) return;
      // Bodies still arriving, answers still being written: cut here, while the store is open, not by the process's exit.
      server.closeAllConnections();
      await closed;
    },
  };
}
