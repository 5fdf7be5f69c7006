/**
 * Hunt 5's first hour (prof/hunt5-firsthour.md) against a real `hookagent serve` on a free
 * port: `test --send --payload` posts what a real sender posts, `--send` finds the serve of
 * its config dir, and a token that cannot be sent as an HTTP header is refused when the
 * configuration is loaded, naming its key.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, buildCli, hkIn, tempConfigDir } from '../support/cli';
import { startServe, stopServe, type Serve } from '../support/serve';

beforeAll(() => buildCli(), 60_000);

const hk = hkIn;

describe('with serve running', () => {
  const dir = tempConfigDir('webhooks: {}\n', 'hookagent-firsthour5-serve-');
  let serve: Serve;
  beforeAll(async () => {
    serve = await startServe(dir, {}, { quiet: true });
    expect((await hk(dir, 'webhook', 'subscribe', 'deploys', '--events', 'deploy.done', '--prompt', 'Deployed {service}')).code).toBe(0);
  }, 30_000);
  afterAll(async () => {
    await stopServe(serve);
  });

  test('--send --payload: a payload naming deploy.done is taken, as a real sender\'s is (D1)', async () => {
    const file = join(dir, 'deploy.json');
    writeFileSync(file, '{"event_type":"deploy.done","service":"api"}');
    const sent = await hk(dir, 'webhook', 'test', 'deploys', '--payload', file, '--send', '--url', serve.url, '--wait', '20');
    expect(sent.stdout).toMatch(/POST \/webhooks\/custom\/deploys → 202 \{"status":"accepted","event":"deploy\.done"/);
    expect(sent.stdout).toContain('Outcome: delivered');
    expect(sent.code).toBe(0);
  }, 40_000);

  test('--send --payload naming another event type is not taken, as a real sender\'s would not be (D1)', async () => {
    const sent = await hk(dir, 'webhook', 'test', 'deploys', '--payload', '{"event_type":"deploy.started","service":"api"}', '--send', '--url', serve.url);
    expect(sent.stdout).toContain('"status":"ignored"');
    expect(sent.stdout).toContain('"event":"deploy.started"');
    expect(sent.stdout).toContain("'deploys' did not take this event");
  });

  test('--send without --url posts to the serve running for this config dir (D9)', async () => {
    const sent = await hk(dir, 'webhook', 'test', 'deploys', '--send', '--wait', '20');
    expect(sent.stdout).toMatch(/POST \/webhooks\/custom\/deploys → 202/);
    expect(sent.code).toBe(0);
  }, 40_000);
});

describe('a token that cannot be sent as an HTTP header (D3)', () => {
  const yaml = 'webhooks: {}\ndelivery:\n  codehost:\n    github: { token: ${GITHUB_TOKEN} }\n';

  test('serve refuses the configuration at start, naming the key and the variable, never the value', async () => {
    const dir = tempConfigDir(yaml, 'hookagent-firsthour5-token-');
    writeFileSync(join(dir, '.env'), 'GITHUB_TOKEN=github_pat_…\n');
    const child = spawn(process.execPath, [BIN, 'serve', '--config-dir', dir, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const onData = (c: Buffer) => {
      output += c.toString();
      // Started after all: stopped here, so the assertion below fails instead of the test hanging.
      if (output.includes('listening on')) child.kill();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    expect(await exited).toBe(1);
    expect(output).toContain('delivery.codehost.github.token: the value of ${GITHUB_TOKEN} has "…" (U+2026) at character 12');
    expect(output).toContain('cannot be sent in an HTTP header');
  }, 30_000);

  test('subscribe --deliver codehost_comment warns about it; a well-formed token gets no warning', async () => {
    const dir = tempConfigDir(yaml, 'hookagent-firsthour5-token-');
    writeFileSync(join(dir, '.env'), 'GITHUB_TOKEN=ghp_ one two\n');
    const bad = await hk(dir, 'webhook', 'subscribe', 'pr', '--events', 'pull_request.opened', '--deliver', 'codehost_comment');
    expect(bad.code).toBe(0);
    expect(bad.stderr).toContain('warning: delivery.codehost.github.token: the value of ${GITHUB_TOKEN} has a space at character 5');
    expect(bad.stderr).toContain('serve refuses this configuration until it is fixed');
    writeFileSync(join(dir, '.env'), 'GITHUB_TOKEN=ghp_fine0123\n');
    const good = await hk(dir, 'webhook', 'subscribe', 'pr2', '--events', 'pull_request.opened', '--deliver', 'codehost_comment');
    expect([good.code, good.stderr]).toEqual([0, '']);
  });
});
