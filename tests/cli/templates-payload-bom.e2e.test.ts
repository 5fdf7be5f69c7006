/**
 * Hunt 12 D3 (templates): `webhook test --payload file.json` where the file starts with a
 * UTF-8 byte order mark (Windows Notepad, PowerShell's `Set-Content -Encoding UTF8`) renders
 * as the service would take it; `--dry-run` and standard input (`--payload -`) read it the
 * same way. Built CLI, local store.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCli, hkIn, runCli, tempConfigDir } from '../support/cli';

let dir: string;
let file: string;
const issue = JSON.stringify({ action: 'opened', issue: { number: 1, title: 'Disk full' } });
const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(issue)]);

beforeAll(async () => {
  buildCli();
  dir = tempConfigDir('', 'hookagent-tpl-bom-');
  file = join(dir, 'issue.json');
  writeFileSync(file, withBom);
  expect((await hkIn(dir, 'webhook', 'subscribe', 'issues', '--events', 'issues', '--agent', 'none', '--prompt', 'New issue: {issue.title}')).code).toBe(0);
}, 90_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('webhook test --payload <file with a BOM> renders the prompt', async () => {
  const result = await hkIn(dir, 'webhook', 'test', 'issues', '--payload', file);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  expect(result.stdout).toContain('New issue: Disk full');
});

test('--dry-run --payload <file with a BOM> too', async () => {
  const result = await hkIn(dir, 'webhook', 'test', 'issues', '--dry-run', '--json', '--payload', file);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  expect(JSON.parse(result.stdout)).toMatchObject({ reply: 'New issue: Disk full' });
});

test('--payload - with a BOM on standard input too', async () => {
  const result = await runCli(['--config-dir', dir, 'webhook', 'test', 'issues', '--payload', '-'], {}, withBom.toString('utf8'));
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  expect(result.stdout).toContain('New issue: Disk full');
});
