/**
 * Hunt 11 D4: a refused `subscribe` prints nothing but its error. The alerts walkthrough
 * run by someone who made `alerts` in the Quick start printed its `Placeholders:` on stdout
 * and its event-name and --channel warnings on stderr before the refusal.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCli, hkIn, tempConfigDir } from '../support/cli';

beforeAll(() => buildCli(), 60_000);

const PROMPT = 'Alert {alerts.0.labels.alertname} on {alerts.0.labels.instance}: {alerts.0.annotations.summary}';

function teamchatDir(): string {
  const dir = tempConfigDir('delivery:\n  teamchat: { provider: slack, webhook_url: ${SLACK_WEBHOOK_URL} }\n', 'hookagent-fh11-refused-');
  writeFileSync(join(dir, '.env'), 'SLACK_WEBHOOK_URL=http://127.0.0.1:9/slack\n', { mode: 0o600 });
  return dir;
}

describe('a refused subscribe prints nothing but its error', () => {
  test('subscribe of a name that exists, with placeholders, a misspelt event and a --channel Slack ignores: stdout empty, no warning', async () => {
    const dir = teamchatDir();
    expect((await hkIn(dir, 'webhook', 'subscribe', 'alerts', '--prompt', 'Alert {alerts.0.labels.alertname}')).code).toBe(0);
    const again = await hkIn(dir, 'webhook', 'subscribe', 'alerts', '--events', 'alert.fring,deploy_done', '--deliver', 'teamchat', '--channel', '#x', '--prompt', PROMPT);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toMatch(/^error: A subscription named 'alerts' already exists/);
    expect(again.stderr).not.toContain('warning:');
  }, 30_000);

  test('the same subscribe under a new name says all of it, after the subscription was created', async () => {
    const dir = teamchatDir();
    const created = await hkIn(dir, 'webhook', 'subscribe', 'alerts-2', '--events', 'alert.fring,deploy_done', '--deliver', 'teamchat', '--channel', '#x', '--prompt', PROMPT);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^Placeholders: \{alerts\.0\.labels\.alertname\}, \{alerts\.0\.labels\.instance\}, \{alerts\.0\.annotations\.summary\}\nCreated subscription 'alerts-2'/);
    expect(created.stderr).toContain("warning: 'alert.fring'");
    expect(created.stderr).toContain('--channel');
  }, 30_000);
});
