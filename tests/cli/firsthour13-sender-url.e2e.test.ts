/**
 * Hunt 13 D3: without webhooks.public_url, `subscribe` and `show` printed
 * http://127.0.0.1:8644/… for senders while this config dir's serve listened elsewhere
 * (`serve --port`, as its "port in use" error advises).
 */
import { buildCli, hkIn, tempConfigDir } from '../support/cli';
import { startServe, stopServe, type Serve } from '../support/serve';

beforeAll(() => buildCli(), 60_000);

let serve: Serve | undefined;
afterEach(async () => {
  if (serve) await stopServe(serve);
  serve = undefined;
});

describe('the URL printed for senders', () => {
  test('is where the running serve listens; 127.0.0.1:8644 once no serve runs', async () => {
    const dir = tempConfigDir('', 'hookagent-fh13-url-');
    serve = await startServe(dir, {}); // --port 0: any port but 8644
    const created = await hkIn(dir, 'webhook', 'subscribe', 'alerts');
    expect(created.code).toBe(0);
    expect(created.stdout).toContain(`Custom:  ${serve.url}/webhooks/custom/alerts`);
    expect(created.stdout).not.toContain('8644');
    expect((await hkIn(dir, 'status')).stdout).toContain(serve.url);
    const shown = await hkIn(dir, 'webhook', 'show', 'alerts');
    expect(shown.stdout).toContain(`${serve.url}/webhooks/custom/alerts`);

    await stopServe(serve);
    serve = undefined;
    expect((await hkIn(dir, 'webhook', 'show', 'alerts')).stdout).toContain('http://127.0.0.1:8644/webhooks/custom/alerts');
  }, 60_000);

  test('webhooks.public_url still wins over the running serve', async () => {
    const dir = tempConfigDir('webhooks:\n  public_url: https://hooks.example.com\n', 'hookagent-fh13-url-');
    serve = await startServe(dir, {});
    const created = await hkIn(dir, 'webhook', 'subscribe', 'alerts');
    expect(created.stdout).toContain('https://hooks.example.com/webhooks/custom/alerts');
    expect(created.stdout).not.toContain(serve.url);
  }, 60_000);
});
