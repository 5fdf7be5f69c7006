/**
 * One `hookagent serve` for a test file, over a temporary config dir, delivering `messenger`
 * to a local Telegram Bot API server on 127.0.0.1; started before the file's tests and
 * stopped after them (exit 0 expected), the recorded Telegram requests cleared before each.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { buildCli, runCli, type CliResult } from './cli';
import { sendJson, startLocalServer, type LocalServer } from './local-http';
import { startServe, stopServe, type Serve } from './serve';

export interface TelegramServe {
  dir: string;
  serve: Serve;
  telegram: LocalServer;
  /** The CLI on this config dir. */
  cli(...args: string[]): Promise<CliResult>;
  /** The texts Telegram received, in order. */
  texts(): string[];
  /** A signed GitHub delivery to serve; resolves with the event id of its 202. */
  postGithub(event: string, payload: unknown, delivery: string): Promise<string>;
}

/** `webhooks`: the config's webhooks section (flow YAML); `env` carries the secrets it references, GH_SECRET included. */
export function useServeWithTelegram(options: { prefix: string; webhooks: string; env: Record<string, string> }): TelegramServe {
  const env: Record<string, string> = { TELEGRAM_BOT_TOKEN: '42:e2e', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...options.env };
  const h = {
    dir: '', serve: undefined as unknown as Serve, telegram: undefined as unknown as LocalServer,
    cli: (...args: string[]) => runCli(['--config-dir', h.dir, ...args], env),
    texts: () => h.telegram.requests.map((r) => (JSON.parse(r.body) as { text: string }).text),
    async postGithub(event: string, payload: unknown, delivery: string): Promise<string> {
      const body = JSON.stringify(payload);
      const response = await fetch(`${h.serve.url}/webhooks/github`, {
        method: 'POST', body, headers: { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': delivery, 'x-hub-signature-256': signHub(body, env.GH_SECRET ?? '') },
      });
      const answer = (await response.json()) as { event_id?: string };
      expect(response.status).toBe(202);
      return answer.event_id as string;
    },
  };
  beforeAll(async () => {
    buildCli();
    h.telegram = await startLocalServer((_req, res) => sendJson(res, 200, { ok: true, result: { message_id: h.telegram.requests.length } }));
    h.dir = mkdtempSync(join(tmpdir(), options.prefix));
    writeFileSync(join(h.dir, 'config.yaml'), [
      `webhooks: ${options.webhooks}`,
      `delivery: { timeout: 2s, messenger: { provider: telegram, bot_token: \${TELEGRAM_BOT_TOKEN}, chat_id: "-100", api_url: "${h.telegram.url}" } }`,
    ].join('\n'));
    h.serve = await startServe(h.dir, env);
  }, 60_000);
  afterAll(async () => {
    if (h.serve) expect(await stopServe(h.serve)).toBe(0);
    await h.telegram?.close();
  });
  beforeEach(() => {
    h.telegram.requests.length = 0;
  });
  return h;
}
