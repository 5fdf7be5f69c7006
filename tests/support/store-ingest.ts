/**
 * An ingest running on a config dir's local store, as serve would hold it, for CLI tests
 * that read and write the same store meanwhile: `send` signs a GitHub request with the
 * secret `gh` and answers as API Gateway would.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { signHub } from '../../functions/core/auth/signatures';
import { createIngest } from '../../functions/core/ingest/service';
import { silentLogger } from '../../functions/core/log';
import { systemClock } from '../../functions/core/ports';
import { apiGatewayHandler } from '../../functions/ingest/api-gateway';
import { openLocalRuntime, type LocalRuntime } from '../../functions/local/compose';
import { apiEvent } from './requests';

export interface StoreIngest {
  store: LocalRuntime;
  send(event: string, payload: Record<string, unknown>, options?: { secret?: string; delivery?: string }): Promise<APIGatewayProxyStructuredResultV2>;
  close(): Promise<void>;
}

export async function ingestOnStore(configDir: string): Promise<StoreIngest> {
  mkdirSync(join(configDir, 'data'), { recursive: true });
  const store = await openLocalRuntime(join(configDir, 'data'), { role: 'serve', clock: systemClock, visibilityTimeoutMs: 60_000 });
  const ingest = createIngest(store.ingestDeps({ webhooks: { github: { secret: ['gh'] }, max_payload_size: 1024 * 1024 } }, silentLogger));
  const handler = apiGatewayHandler(async () => ingest, silentLogger);
  return {
    store,
    send: async (event, payload, options = {}) => {
      const body = JSON.stringify(payload);
      const headers = { 'x-github-event': event, 'x-github-delivery': options.delivery ?? `d-${Math.random()}`, 'x-hub-signature-256': signHub(body, options.secret ?? 'gh') };
      return (await handler(apiEvent({ path: '/webhooks/github', body, headers }))) as APIGatewayProxyStructuredResultV2;
    },
    close: () => store.close(),
  };
}
