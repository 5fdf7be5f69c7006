/**
 * The CLI's answers to the mistakes a newcomer makes in the first hour (issue 23): each
 * names what is wrong and what to do, with the contract's exit codes (2 usage, 1 refused).
 */
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli, hkIn, runCli, tempConfigDir } from '../support/cli';

beforeAll(() => buildCli(), 60_000);

const configDir = (yaml = '') => tempConfigDir(yaml, 'hookagent-papercuts-');
const hk = hkIn;

describe('usage errors in plain words (exit 2)', () => {
  const dir = configDir();

  test('a missing argument is named and explained', async () => {
    const show = await hk(dir, 'webhook', 'show');
    expect(show.code).toBe(2);
    expect(show.stderr).toContain('missing argument <name>: which subscription to show');
    expect(show.stderr).not.toContain('non-option');
    const replay = await hk(dir, 'webhook', 'replay');
    expect(replay.code).toBe(2);
    expect(replay.stderr).toContain('missing argument <event-id>');
    // Given after `--`, a value starting with '-' reaches no positional: it is named, not called missing.
    const dashed = await hk(dir, 'webhook', 'subscribe', '--', '-lead');
    expect(dashed.code).toBe(2);
    expect(dashed.stderr).toContain("'-lead' cannot be <name>: names and ids start with a letter or digit, never '-'");
    expect(dashed.stderr).not.toContain('missing argument');
  });

  test('an unknown option gets the closest real one', async () => {
    const result = await hk(dir, 'webhook', 'subscribe', 'x', '--event', 'push');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown option --event; did you mean --events?');
    const far = await hk(dir, 'webhook', 'list', '--zzzzzzzz');
    expect(far.code).toBe(2);
    expect(far.stderr).toContain('unknown option --zzzzzzzz');
    expect(far.stderr).not.toContain('did you mean');
    // Named once, as typed (not also as yargs' camel-case alias).
    const hyphenated = await hk(dir, 'webhook', 'subscribe', 'x', '--max-run-per-hour', '3');
    expect(hyphenated.stderr).toBe("error: unknown option --max-run-per-hour; did you mean --max-runs-per-hour?\nRun with --help for usage and an example.\n");
  });

  test('an unknown command or a stray argument is named as such, not as an option', async () => {
    const bogus = await hk(dir, 'bogus');
    expect([bogus.code, bogus.stderr]).toEqual([2, expect.stringContaining("unknown command 'bogus': the commands are webhook, secrets, status, serve, console, completion")]);
    const extra = await hk(dir, 'webhook', 'list', 'extra');
    expect([extra.code, extra.stderr]).toEqual([2, expect.stringContaining("unexpected argument 'extra' for webhook list")]);
    expect(extra.stderr).not.toContain('--extra');
  });

  test('an unknown command of webhook or secrets is named as an unknown command, with the group\'s commands', async () => {
    const bogus = await hk(dir, 'webhook', 'bogus');
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain("error: unknown command 'bogus': the webhook commands are subscribe, list, show, update, delete, pause, resume, test, events, event, usage, replay, requests, dead-letters, redrive\n");
    expect(bogus.stderr).not.toContain('unexpected argument');
    // A global option between the group and the word changes nothing.
    const after = await runCli(['webhook', '--config-dir', dir, 'bogus']);
    expect([after.code, after.stderr]).toEqual([2, expect.stringContaining("unknown command 'bogus': the webhook commands are")]);
    const secrets = await hk(dir, 'secrets', 'bogus');
    expect([secrets.code, secrets.stderr]).toEqual([2, expect.stringContaining("unknown command 'bogus': the secrets commands are set, list, delete")]);
    // A real command's name given again is a stray argument, not an unknown command.
    const twice = await hk(dir, 'webhook', 'list', 'list');
    expect([twice.code, twice.stderr]).toEqual([2, expect.stringContaining("unexpected argument 'list' for webhook list")]);
  });

  test('usage --since refuses a day the month does not have instead of rolling it over; update --description \'\' clears it', async () => {
    for (const day of ['2026-02-30', '2026-04-31']) {
      const since = await hk(dir, 'webhook', 'usage', '--since', day);
      expect([since.code, since.stderr]).toEqual([1, expect.stringContaining(`${day} is not a day of the calendar`)]);
    }
    expect((await hk(dir, 'webhook', 'usage', '--since', '2024-02-29')).code).toBe(0);
    await hk(dir, 'webhook', 'subscribe', 'described', '--events', 'push', '--description', 'hello');
    expect((await hk(dir, 'webhook', 'update', 'described', '--description', '')).code).toBe(0);
    expect(JSON.parse((await hk(dir, 'webhook', 'show', 'described', '--json')).stdout).description).toBeNull();
  });

  test('a public_url with a ${VAR} prints resolved from the environment or .env, and says when it has no value', async () => {
    const own = configDir('webhooks:\n  public_url: https://${HOOK_HOST}\n');
    writeFileSync(join(own, '.env'), 'HOOK_HOST=hooks.example.org\n');
    const made = await hk(own, 'webhook', 'subscribe', 'resolved', '--events', 'push');
    expect(made.stdout).toContain('GitHub:  https://hooks.example.org/webhooks/github');
    writeFileSync(join(own, '.env'), '');
    const shown = await hk(own, 'webhook', 'show', 'resolved');
    expect(shown.stdout).toContain('https://${HOOK_HOST}/webhooks/github');
    expect(shown.stderr).toContain('webhooks.public_url references ${HOOK_HOST}, set neither in the environment nor in');
  });

  test('an option that takes one value, given twice, is refused instead of dropped', async () => {
    const twice = await hk(dir, 'webhook', 'subscribe', 'twice', '--events', 'push', '--prompt', 'first', '--prompt', 'second');
    expect([twice.code, twice.stderr]).toEqual([2, expect.stringContaining('--prompt was given 2 times; it takes one value: give it once')]);
    expect((await hk(dir, 'webhook', 'show', 'twice')).code).toBe(1);
    const description = await hk(dir, 'webhook', 'subscribe', 'twice', '--events', 'push', '--description', 'a', '--description', 'b');
    expect(description.stderr).toContain('--description was given 2 times');
    // Options that take several values still take them by repetition.
    expect((await hk(dir, 'webhook', 'subscribe', 'many', '--events', 'push', '--events', 'issues,pull_request', '--deliver', 'log', '--deliver', 'log')).code).toBe(0);
  });

  test('serve --port abc is a usage error with a readable message, before anything starts', async () => {
    for (const port of ['abc', '70000', '-1', '1.5']) {
      const result = await hk(configDir(), 'serve', '--port', port);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('--port must be a whole number from 0 to 65535');
      expect(result.stdout).toBe('');
    }
  });
});

describe('refused values with a hint (exit 1)', () => {
  test('--deliver slack points at teamchat; telegram at messenger', async () => {
    const dir = configDir();
    const slack = await hk(dir, 'webhook', 'subscribe', 'a', '--events', 'push', '--deliver', 'slack');
    expect(slack.code).toBe(1);
    expect(slack.stderr).toContain("Unknown delivery target 'slack' (did you mean 'teamchat'?)");
    const telegram = await hk(dir, 'webhook', 'subscribe', 'a', '--events', 'push', '--deliver', 'telegram');
    expect(telegram.stderr).toContain("(did you mean 'messenger'?)");
  });

  test('a misspelt event name is accepted with a warning that suggests the real one', async () => {
    const dir = configDir();
    const result = await hk(dir, 'webhook', 'subscribe', 'typo', '--events', 'pull_requst.opened');
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("Did you mean 'pull_request.opened'?");
  });

  test('update warns only about the event names it adds, not again about the stored ones', async () => {
    const dir = configDir();
    const created = await hk(dir, 'webhook', 'subscribe', 'deploys', '--events', 'deploy.done');
    expect([created.code, created.stderr]).toEqual([0, expect.stringContaining("warning: 'deploy.done' is not a GitHub or GitLab event name")]);
    for (const change of [['--description', 'CD events'], ['--max-steps', '3'], ['--filter', 'env == prod']]) {
      const updated = await hk(dir, 'webhook', 'update', 'deploys', ...change);
      expect([updated.code, updated.stderr]).toEqual([0, '']);
    }
    // Given again with a new one: only the new one is warned about.
    const added = await hk(dir, 'webhook', 'update', 'deploys', '--events', 'deploy.done,rollout.started');
    expect(added.code).toBe(0);
    expect(added.stderr).toContain("warning: 'rollout.started' is not a GitHub or GitLab event name");
    expect(added.stderr).not.toContain("'deploy.done'");
  });
});

describe('the right secret, shown at the right time', () => {
  test('a GitHub subscription names the configured GitHub secret, and warns for an endpoint without one', async () => {
    const dir = configDir('webhooks:\n  github: { secret: ${GH_SECRET} }\n');
    const result = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'pr', '--events', 'pull_request,merge_request'], { GH_SECRET: 'x' });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/GitHub: +http:\/\/127\.0\.0\.1:8644\/webhooks\/github\n +Secret: the value of webhooks\.github\.secret in config\.yaml/);
    expect(result.stdout).toContain('warning: no webhooks.gitlab.secret is configured, so this endpoint refuses everything (401)');
    const show = await runCli(['--config-dir', dir, 'webhook', 'show', 'pr'], { GH_SECRET: 'x' });
    expect(show.stdout).toContain('endpoints:\n  GitHub:  http://127.0.0.1:8644/webhooks/github');
    expect(show.stdout).not.toMatch(/whsec_[A-Za-z0-9+/]{10}/);
  });

  test('a subscription without code-host events says it is reached only through its custom endpoint', async () => {
    const dir = configDir();
    const result = await hk(dir, 'webhook', 'subscribe', 'alerts');
    expect(result.stdout).not.toContain('/webhooks/github');
    expect(result.stdout).toContain('reached only through http://127.0.0.1:8644/webhooks/custom/alerts');
    expect(result.stdout).toMatch(/Secret \(shown once.*whsec_/);
  });

  test('a subscription whose events are all github:/gitlab: gets no custom endpoint or secret: nothing sent there could match', async () => {
    const dir = configDir('webhooks:\n  github: { secret: ${GH_SECRET} }\n  gitlab: { secret: ${GL_SECRET} }\n');
    const env = { GH_SECRET: 'x', GL_SECRET: 'y' };
    const created = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'gh-only', '--events', 'github:push,gitlab:merge_request'], env);
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('GitHub:  http://127.0.0.1:8644/webhooks/github');
    expect(created.stdout).toContain('GitLab:  http://127.0.0.1:8644/webhooks/gitlab');
    expect(created.stdout).not.toContain('/webhooks/custom/');
    expect(created.stdout).not.toContain('whsec_');
    const shown = await runCli(['--config-dir', dir, 'webhook', 'show', 'gh-only'], env);
    expect(shown.stdout).toContain('endpoints:\n  GitHub:');
    expect(shown.stdout).not.toContain('/webhooks/custom/');
    expect(shown.stdout).not.toContain('--show-secret');
    // An unqualified or custom: filter can match a custom sender's event: the endpoint is printed again.
    for (const [name, events] of [['mixed', 'github:push,deploy'], ['custom-too', 'gitlab:push,custom:alert']]) {
      const made = await runCli(['--config-dir', dir, 'webhook', 'subscribe', name as string, '--events', events as string], env);
      expect(made.stdout).toContain(`Custom:  http://127.0.0.1:8644/webhooks/custom/${name}   (for other senders: CI, monitoring, scripts)`);
      expect(made.stdout).toMatch(/Secret \(shown once.*whsec_/);
    }
  });
});

describe('webhook test that teaches', () => {
  test('without --payload, the prompt renders against a sample of the subscription\'s event', async () => {
    const dir = configDir();
    await hk(dir, 'webhook', 'subscribe', 'pr', '--events', 'pull_request.opened', '--prompt', 'Review {pull_request.html_url} by {pull_request.user.login}');
    const result = await hk(dir, 'webhook', 'test', 'pr');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Review https:\/\/github\.com\/\S+\/pull\/\d+ by \S+/);
    expect(result.stdout).not.toContain('Unresolved');
    expect(result.stderr).toContain("sample github 'pull_request.opened' payload");
  });

  test('GitLab and alert subscriptions get their own samples; an unknown event says to pass --payload', async () => {
    const dir = configDir();
    await hk(dir, 'webhook', 'subscribe', 'mr', '--events', 'gitlab:merge_request', '--prompt', 'MR !{object_attributes.iid} in {project.path_with_namespace}');
    const mr = await hk(dir, 'webhook', 'test', 'mr');
    expect(mr.stdout).toMatch(/^MR !\d+ in \S+\/\S+/);
    await hk(dir, 'webhook', 'subscribe', 'alerts', '--events', 'alert.firing', '--prompt', 'Alert {alerts.0.labels.alertname}');
    expect((await hk(dir, 'webhook', 'test', 'alerts')).stdout).toMatch(/^Alert DiskRunningFull/);
    await hk(dir, 'webhook', 'subscribe', 'odd', '--events', 'deploy', '--prompt', 'Deploy {service}');
    const odd = await hk(dir, 'webhook', 'test', 'odd');
    expect(odd.stderr).toContain('no sample payload ships for this event');
    expect(odd.stdout).toContain('Unresolved placeholders (left as written): {service}');
  });

  test('with --payload and no prompt, the event type is the one the service classifies (payload event_type, alerts, GitHub action)', async () => {
    const dir = configDir();
    await hk(dir, 'webhook', 'subscribe', 'np', '--deliver', 'log');
    expect((await hk(dir, 'webhook', 'test', 'np', '--payload', '{"event_type":"deploy.done"}')).stdout).toMatch(/^Event: deploy\.done\n/);
    expect((await hk(dir, 'webhook', 'test', 'np', '--payload', join(__dirname, '../fixtures/alerts/alertmanager.json'))).stdout).toMatch(/^Event: alert\.firing\n/);
    await hk(dir, 'webhook', 'subscribe', 'issues', '--events', 'issues.opened', '--deliver', 'log');
    expect((await hk(dir, 'webhook', 'test', 'issues', '--payload', '{"action":"opened","issue":{"number":1}}')).stdout).toMatch(/^Event: issues\.opened\n/);
    await hk(dir, 'webhook', 'subscribe', 'mr', '--events', 'gitlab:merge_request', '--deliver', 'log');
    expect((await hk(dir, 'webhook', 'test', 'mr', '--payload', join(__dirname, '../fixtures/gitlab/merge_request.json'))).stdout).toMatch(/^Event: merge_request\.open\n/);
    // --event still decides when given.
    expect((await hk(dir, 'webhook', 'test', 'issues', '--event', 'issues.closed', '--payload', '{}')).stdout).toMatch(/^Event: issues\.closed\n/);
  });
});

// $HOOKAGENT_CONFIG_DIR, not --config-dir: the directory is then the default one and hints carry no --config-dir (firsthour5.e2e checks that they do otherwise).
describe('hints use the command as it was installed', () => {
  test('run from a checkout (node bin/hookagent.cjs), hints say npx hookagent', async () => {
    const result = await runCli(['webhook', 'list'], { HOOKAGENT_CONFIG_DIR: configDir(), PATH: '/usr/bin:/bin', npm_lifecycle_event: '' });
    expect(result.stdout).toContain('Create one with: npx hookagent webhook subscribe');
  });

  test('run from a checkout, the hint for an unknown event id says npx hookagent too', async () => {
    const result = await runCli(['webhook', 'event', 'evt_nosuch'], { HOOKAGENT_CONFIG_DIR: configDir(), PATH: '/usr/bin:/bin', npm_lifecycle_event: '' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("No event 'evt_nosuch' in the event log");
    expect(result.stderr).toContain("'npx hookagent webhook events <name>'");
    expect(result.stderr).not.toMatch(/[^x] hookagent webhook events/);
  });

  test('run from a checkout, the --follow --status filtered and unsupported-shell hints say npx hookagent', async () => {
    const checkout = { HOOKAGENT_CONFIG_DIR: configDir(), PATH: '/usr/bin:/bin', npm_lifecycle_event: '' };
    const follow = await runCli(['webhook', 'events', 'x', '--follow', '--status', 'filtered'], checkout);
    expect(follow.code).toBe(2);
    expect(follow.stderr).toContain('use npx hookagent webhook requests --outcome filtered');
    const fish = await runCli(['completion', 'fish'], checkout);
    expect(fish.code).toBe(2);
    expect(fish.stderr).toBe("error: completion supports bash and zsh, not 'fish': npx hookagent completion bash >> ~/.bashrc, or npx hookagent completion zsh >> ~/.zshrc\n");
    expect(follow.stderr + fish.stderr).not.toMatch(/[^x] hookagent (webhook|completion)/);
  });

  test('on the PATH as hookagent (a link to this CLI, as npm link makes), hints say hookagent', async () => {
    const bin = mkdtempSync(join(tmpdir(), 'hookagent-bin-'));
    symlinkSync(join(__dirname, '..', '..', 'bin', 'hookagent.cjs'), join(bin, 'hookagent'));
    const result = await runCli(['webhook', 'list'], { HOOKAGENT_CONFIG_DIR: configDir(), PATH: `${bin}:/usr/bin:/bin`, npm_lifecycle_event: '' });
    expect(result.stdout).toContain('Create one with: hookagent webhook subscribe');
  });

  test('another program named hookagent on the PATH is not this CLI: hints keep npx hookagent', async () => {
    const bin = mkdtempSync(join(tmpdir(), 'hookagent-bin-'));
    writeFileSync(join(bin, 'hookagent'), '#!/bin/sh\n', { mode: 0o755 });
    const result = await runCli(['webhook', 'list'], { HOOKAGENT_CONFIG_DIR: configDir(), PATH: `${bin}:/usr/bin:/bin`, npm_lifecycle_event: '' });
    expect(result.stdout).toContain('Create one with: npx hookagent webhook subscribe');
  });
});
