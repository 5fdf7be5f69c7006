/** A real HTTP server on 127.0.0.1 (free port) whose answers a test scripts. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Responder = (request: Recorded, response: ServerResponse) => void | Promise<void>;

export interface LocalServer {
  url: string;
  requests: Recorded[];
  respond: Responder;
  close(): Promise<void>;
}

export async function startLocalServer(respond: Responder): Promise<LocalServer> {
  const requests: Recorded[] = [];
  const state: LocalServer = { url: '', requests, respond, close: async () => {} };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: Recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(recorded);
      void Promise.resolve(state.respond(recorded, res)).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return state;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** One scripted answer: status, JSON body, headers. */
export type ScriptedAnswer = [number, unknown, Record<string, string>?];

/**
 * A local server for a test file that answers from a script: each request takes the next
 * answer of `script` (assign or push), else `fallback`. Started before the file's tests and
 * closed after them; the script and the recorded requests are cleared before each test.
 */
export function useScriptedServer(fallback: ScriptedAnswer): { server: LocalServer; script: ScriptedAnswer[] } {
  const state = { server: undefined as unknown as LocalServer, script: [] as ScriptedAnswer[] };
  beforeAll(async () => {
    state.server = await startLocalServer((_req, res) => {
      const [status, body, headers] = state.script.shift() ?? fallback;
      sendJson(res, status, body, headers);
    });
  });
  afterAll(async () => state.server.close());
  beforeEach(() => {
    state.server.requests.length = 0;
    state.script = [];
  });
  return state;
}
