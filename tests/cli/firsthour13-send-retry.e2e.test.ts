/**
 * Hunt 13 D2: `webhook test --send` for a delivery whose first attempt failed and waits for
 * its paced retry printed only "Still queued after Ns" (exit 0), though the record it read
 * held the reason.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { buildCli, hkIn, tempConfigDir } from '../support/cli';
import { startServe, stopServe, type Serve } from '../support/serve';

beforeAll(() => buildCli(), 60_000);

let serve: Serve | undefined;
afterEach(async () => {
  if (serve) await stopServe(serve);
  serve = undefined;
});

/** A port on 127.0.0.1 nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test('a failed attempt waiting for its retry: --send prints the reason, the target and the retry, and exits 1', async () => {
  // The alerts walkthrough with a SLACK_WEBHOOK_URL nothing answers (a mistyped port).
  const dir = tempConfigDir('delivery:\n  teamchat: { provider: slack, webhook_url: ${SLACK_WEBHOOK_URL} }\n', 'hookagent-fh13-send-');
  writeFileSync(join(dir, '.env'), `SLACK_WEBHOOK_URL=http://127.0.0.1:${await closedPort()}/services/T000/B000/XXXX\n`, { mode: 0o600 });
  serve = await startServe(dir, {});
  expect((await hkIn(dir, 'webhook', 'subscribe', 'alerts', '--events', 'alert.firing', '--deliver', 'teamchat', '--prompt', 'Alert {alerts.0.labels.alertname}')).code).toBe(0);

  const sent = await hkIn(dir, 'webhook', 'test', 'alerts', '--send', '--wait', '5');
  expect(sent.stdout).toMatch(/Attempt 1 failed — network_error: teamchat: Slack could not be reached/);
  expect(sent.stdout).toMatch(/a retry is scheduled in about \d+s/);
  expect(sent.stdout).toMatch(/\n {2}teamchat: failed \(/);
  expect(sent.stdout).toContain('webhook events alerts');
  expect(sent.stdout).not.toContain('Still queued');
  expect(sent.code).toBe(1);
  // `events` says the same of the record: queued, one attempt, the reason.
  expect((await hkIn(dir, 'webhook', 'events', 'alerts')).stdout).toMatch(/queued\s+1\s+network_error: teamchat: Slack could not be reached/);
}, 60_000);
