/**
 * servelife (hunt 12, defects 3 and 4): config.yaml reloads whatever kind of file it is, and
 * a config.yaml that disappears under a running serve is not an empty configuration.
 * - A symlink into a dotfiles repo (GNU stow, a config kept in git) or a single file
 *   bind-mounted into the config dir (`docker run -v ./config.yaml:…`): an edit made through
 *   the other path reaches serve, and `status` stops saying "retry in a moment".
 * - `mv config.yaml config.yaml.bak`, a deploy's `rm` then `cp`: serve keeps the configuration
 *   it has (webhook secrets, agent), says which file is missing, and applies the file again
 *   when it is back. README: "A missing file means every default" holds at start only.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { buildCli, runCli, tempConfigDir } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { eventually, startServe, stopServe } from '../support/serve';

const env = { GH_SECRET: 'cfg-secret', OPENAI_API_KEY: 'sk-cfg' };
let llm: LocalServer;

beforeAll(async () => {
  buildCli();
  llm = await startLocalServer((_req, res) => sendJson(res, 200, { choices: [{ message: { role: 'assistant', content: 'from the model' } }] }));
}, 60_000);
afterAll(async () => llm.close());

const big = JSON.stringify({ x: 'y'.repeat(3_000) });
const reloads = (output: string) => output.match(/configuration reloaded/g)?.length ?? 0;

/** config.yaml at 1MB, then `edit` writes 2KB: the next request over 2 KB gets 413, and status says nothing of an older configuration. */
async function checkReloads(dir: string, edit: (yaml: string) => void): Promise<void> {
  expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 's1', '--prompt', 'hi', '--deliver', 'log'])).code).toBe(0);
  const secret = (JSON.parse((await runCli(['--config-dir', dir, 'webhook', 'show', 's1', '--json', '--show-secret'])).stdout) as { secret: string }).secret;
  const serve = await startServe(dir, {});
  const post = async () => (await fetch(`${serve.url}/webhooks/custom/s1`, { method: 'POST', body: big, headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' } })).status;
  try {
    expect(await post()).toBe(202);
    edit('webhooks:\n  max_payload_size: 2KB\n');
    await eventually(() => reloads(serve.output()) === 1, 'configuration reloaded', 10_000);
    const status = await runCli(['--config-dir', dir, 'status']);
    expect({ answer: await post(), statusSaysOlder: /older configuration/.test(status.stdout + status.stderr) }).toEqual({ answer: 413, statusSaysOlder: false });
  } finally {
    await stopServe(serve);
  }
}

test('config.yaml a symlink to a dotfiles repo: an edit of the file it points to applies', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-link-'));
  const dotfiles = mkdtempSync(join(tmpdir(), 'hookagent-dotfiles-'));
  writeFileSync(join(dotfiles, 'config.yaml'), 'webhooks:\n  max_payload_size: 1MB\n');
  symlinkSync(join(dotfiles, 'config.yaml'), join(dir, 'config.yaml'));
  await checkReloads(dir, (yaml) => writeFileSync(join(dotfiles, 'config.yaml'), yaml));
}, 60_000);

test('config.yaml a symlink whose target an editor replaces (write to a new file, rename over): the edit applies', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-link-'));
  const dotfiles = mkdtempSync(join(tmpdir(), 'hookagent-dotfiles-'));
  writeFileSync(join(dotfiles, 'config.yaml'), 'webhooks:\n  max_payload_size: 1MB\n');
  symlinkSync(join(dotfiles, 'config.yaml'), join(dir, 'config.yaml'));
  await checkReloads(dir, (yaml) => {
    writeFileSync(join(dotfiles, '.config.yaml.swp'), yaml);
    renameSync(join(dotfiles, '.config.yaml.swp'), join(dotfiles, 'config.yaml'));
  });
}, 60_000);

test('config.yaml through a `current` symlink a deploy swaps to a new release (no watch sees it): the new release applies', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-link-'));
  const releases = mkdtempSync(join(tmpdir(), 'hookagent-releases-'));
  for (const [release, size] of [['v1', '1MB'], ['v2', '2KB']]) {
    mkdirSync(join(releases, release as string));
    writeFileSync(join(releases, release as string, 'config.yaml'), `webhooks:\n  max_payload_size: ${size}\n`);
  }
  symlinkSync(join(releases, 'v1'), join(releases, 'current'));
  symlinkSync(join(releases, 'current', 'config.yaml'), join(dir, 'config.yaml'));
  await checkReloads(dir, () => {
    symlinkSync(join(releases, 'v2'), join(releases, 'next'));
    renameSync(join(releases, 'next'), join(releases, 'current'));
  });
}, 60_000);

// A single file bind-mounted into the config dir, as `docker run -v` does (mount needs root, as CI has).
function bindMount(source: string, target: string): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('mount', ['--bind', source, target], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const hostDir = mkdtempSync(join(tmpdir(), 'hookagent-host-'));
const mountDir = mkdtempSync(join(tmpdir(), 'hookagent-mounted-'));
writeFileSync(join(hostDir, 'config.yaml'), 'webhooks:\n  max_payload_size: 1MB\n');
writeFileSync(join(mountDir, 'config.yaml'), '');
const mounted = bindMount(join(hostDir, 'config.yaml'), join(mountDir, 'config.yaml'));
afterAll(() => {
  if (mounted) execFileSync('umount', [join(mountDir, 'config.yaml')], { stdio: 'ignore' });
});

(mounted ? test : test.skip)('config.yaml bind-mounted as one file (docker -v): an edit on the host applies', async () => {
  await checkReloads(mountDir, (yaml) => writeFileSync(join(hostDir, 'config.yaml'), yaml));
}, 60_000);

test('control: a plain config.yaml edited in place applies', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-plain-'));
  writeFileSync(join(dir, 'config.yaml'), 'webhooks:\n  max_payload_size: 1MB\n');
  await checkReloads(dir, (yaml) => writeFileSync(join(dir, 'config.yaml'), yaml));
}, 60_000);

test('config.yaml moved aside while serve runs: serve keeps its configuration (secrets, agent), names the missing file, and applies the file when it is back', async () => {
  const dir = tempConfigDir('', 'hookagent-cfgrm-');
  const yaml = [
    'webhooks: { github: { secret: ${GH_SECRET} } }',
    `agent: { provider: openai, model: m, base_url: ${llm.url}/v1, api_key: \${OPENAI_API_KEY} }`,
  ].join('\n');
  writeFileSync(join(dir, 'config.yaml'), yaml);
  expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'issues', '--events', 'issues', '--prompt', 'Issue {issue.title}', '--deliver', 'log'], env)).code).toBe(0);
  const serve = await startServe(dir, env);
  const send = async (id: string) => {
    const body = JSON.stringify({ action: 'opened', issue: { number: 1, title: id }, repository: { full_name: 'o/r' } });
    return (await fetch(`${serve.url}/webhooks/github`, { method: 'POST', body, headers: { 'x-github-event': 'issues', 'x-github-delivery': id, 'x-hub-signature-256': signHub(body, env.GH_SECRET) } })).status;
  };
  try {
    renameSync(join(dir, 'config.yaml'), join(dir, 'config.yaml.bak'));
    await eventually(() => /config\.yaml.*(removed|missing)|(removed|missing).*config\.yaml/.test(serve.output()), 'the missing file named', 10_000);
    expect(serve.output()).toContain(join(dir, 'config.yaml'));
    const status = await runCli(['--config-dir', dir, 'status'], env);
    expect(status.stdout + status.stderr).toContain('config.yaml was removed; still serving with the previous configuration');
    const before = llm.requests.length;
    expect({ status: await send('cfg-1'), reloaded: reloads(serve.output()) }).toEqual({ status: 202, reloaded: 0 });
    await eventually(() => llm.requests.length > before, 'the configured model called');
    // The file back (a changed one): applied as any edit.
    writeFileSync(join(dir, 'config.yaml'), `${yaml}\n# restored\n`);
    await eventually(() => reloads(serve.output()) === 1, 'configuration reloaded', 10_000);
    expect(await send('cfg-2')).toBe(202);
  } finally {
    await stopServe(serve);
  }
}, 60_000);
