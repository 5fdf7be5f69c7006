/**
 * `hookagent serve` posting to a local server speaking GitHub's wire format: a config dir
 * whose config.yaml takes GitHub webhooks signed with `secret` and comments with a token at
 * the fake code host. Registers its own beforeAll/afterAll; the test starts serve (after or
 * before its subscriptions) through `start`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { buildCli, runCli } from './cli';
import { startFakeCodehost, type FakeCodehost } from './fake-codehost';
import { startServe, stopServe, type Serve } from './serve';

export interface ServeWithGithub {
  host: FakeCodehost;
  dir: string;
  serve: Serve;
  env: Record<string, string>;
  /** The built CLI on this config dir. */
  hk: (...args: string[]) => ReturnType<typeof runCli>;
  start: () => Promise<Serve>;
  /** POSTs a signed GitHub event to serve. */
  send: (event: string, payload: string, delivery: string) => Promise<{ status: number; body: Record<string, unknown> }>;
}

export function useServeWithGithub(name: string, setup: (h: ServeWithGithub) => Promise<void> = async () => undefined): ServeWithGithub {
  const secret = `${name}-gh-secret`;
  // Filled in by beforeAll (host, dir) and start (serve), before any test reads them.
  const h: Partial<ServeWithGithub> & Pick<ServeWithGithub, 'env'> = { env: { GH_SECRET: secret, GITHUB_TOKEN: `ghp_${name}`, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' } };
  h.hk = (...args) => runCli(['--config-dir', h.dir as string, ...args], h.env);
  h.start = async () => (h.serve = await startServe(h.dir as string, h.env));
  h.send = async (event, payload, delivery) => {
    const res = await fetch(`${(h.serve as Serve).url}/webhooks/github`, {
      method: 'POST', body: payload,
      headers: { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': delivery, 'x-hub-signature-256': signHub(payload, secret) },
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  beforeAll(async () => {
    buildCli();
    h.host = await startFakeCodehost();
    h.dir = mkdtempSync(join(tmpdir(), `hookagent-${name}-`));
    writeFileSync(join(h.dir, 'config.yaml'), [
      'webhooks: { github: { secret: ${GH_SECRET} } }',
      'delivery:',
      '  timeout: 2s',
      `  codehost: { github: { token: \${GITHUB_TOKEN}, api_url: "${h.host.url}" } }`,
    ].join('\n'));
    await setup(h as ServeWithGithub);
  }, 60_000);
  afterAll(async () => {
    if (h.serve) await stopServe(h.serve);
    await h.host?.close();
    if (h.dir) rmSync(h.dir, { recursive: true, force: true });
  });
  return h as ServeWithGithub;
}
