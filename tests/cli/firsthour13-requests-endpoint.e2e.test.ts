/**
 * Hunt 13 D1: requests to a custom name that is no subscription's are recorded under
 * `custom/?` (README "Request log"), so `webhook requests --endpoint custom/<name>` for the
 * name a sender was given found nothing, and the help said `custom/?` was for other names.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCli, hkIn, tempConfigDir } from '../support/cli';
import { startServe, stopServe, type Serve } from '../support/serve';

beforeAll(() => buildCli(), 60_000);

const ALERTMANAGER = readFileSync(join(__dirname, '..', 'fixtures', 'alerts', 'alertmanager.json'), 'utf8');
const POINTER = "No subscription named 'alert': requests to it are recorded under --endpoint 'custom/?'";

let serve: Serve | undefined;
afterEach(async () => {
  if (serve) await stopServe(serve);
  serve = undefined;
});

const post = (url: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer whsec_x' }, body: ALERTMANAGER });

describe('webhook requests --endpoint custom/<name> for a name with no subscription', () => {
  test('lists the 404s sent to that name (recorded under custom/?), not those to other names, and says where they are', async () => {
    // Alertmanager pointed at .../custom/alert while the subscription is `alerts`.
    const dir = tempConfigDir('', 'hookagent-fh13-endpoint-');
    serve = await startServe(dir, {});
    expect((await hkIn(dir, 'webhook', 'subscribe', 'alerts')).code).toBe(0);
    expect((await post(`${serve.url}/webhooks/custom/alert`)).status).toBe(404);
    expect((await post(`${serve.url}/webhooks/custom/other`)).status).toBe(404);

    const listed = await hkIn(dir, 'webhook', 'requests', '--endpoint', 'custom/alert');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/custom\/\?\s+404\s+not_found\s+-\s+-\s+No subscription named 'alert'/);
    expect(listed.stdout).not.toContain("'other'");
    expect(listed.stderr).toContain("note: no subscription named 'alert'");
    expect(listed.stderr).toContain("--endpoint 'custom/?'");

    const json = JSON.parse((await hkIn(dir, 'webhook', 'requests', '--endpoint', 'custom/alert', '--json')).stdout) as Array<{ endpoint: string; message: string }>;
    expect(json.map((r) => [r.endpoint, r.message])).toEqual([['custom/?', "No subscription named 'alert'"]]);
  }, 60_000);

  test('with nothing found, it points at custom/?; a subscription with no requests keeps the plain answer', async () => {
    const dir = tempConfigDir('', 'hookagent-fh13-endpoint-');
    expect((await hkIn(dir, 'webhook', 'subscribe', 'alerts')).code).toBe(0);
    const none = await hkIn(dir, 'webhook', 'requests', '--endpoint', 'custom/alert');
    expect(none.code).toBe(0);
    expect(none.stdout.trim()).toBe(POINTER);
    const filtered = await hkIn(dir, 'webhook', 'requests', '--endpoint', 'custom/alert', '--outcome', 'method_not_allowed');
    expect(filtered.stdout.trim()).toBe(POINTER);
    const own = await hkIn(dir, 'webhook', 'requests', '--endpoint', 'custom/alerts');
    expect(own.stdout.trim()).toBe('No requests recorded in the last 7 days that match.');
  }, 60_000);

  test("the help and the usage error say custom/? holds the names that are no subscription's", async () => {
    const dir = tempConfigDir('', 'hookagent-fh13-endpoint-');
    const help = await hkIn(dir, 'webhook', 'requests', '--help');
    const wrong = await hkIn(dir, 'webhook', 'requests', '--endpoint', 'custom/Alert');
    expect(wrong.code).toBe(2);
    for (const text of [help.stdout.replace(/\s+/g, ' '), wrong.stderr]) {
      expect(text).toContain('custom/? (custom names that are not the name of a subscription)');
      expect(text).not.toContain('not valid subscription names');
    }
  }, 60_000);
});
