/**
 * A worker test file's fixtures: a local Telegram Bot API server on 127.0.0.1 for the file
 * (its recorded requests cleared before each test), and a fresh temporary SQLite store for
 * each test, closed after it. `bind` receives both before each test.
 */
import { sendJson, startLocalServer, type LocalServer } from './local-http';
import { tempStore, type TestStore } from './local-store';

export function useStoreAndTelegram(bind: (store: TestStore, telegram: LocalServer) => void): void {
  let telegram: LocalServer | undefined;
  let store: TestStore | undefined;
  beforeAll(async () => {
    const server = await startLocalServer((_req, res) => sendJson(res, 200, { ok: true, result: { message_id: server.requests.length } }));
    telegram = server;
  });
  afterAll(() => telegram?.close());
  beforeEach(() => {
    store = tempStore();
    telegram!.requests.length = 0;
    bind(store, telegram!);
  });
  afterEach(() => store?.close());
}
