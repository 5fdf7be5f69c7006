/**
 * README, "CLI: `hookagent`", **Mistakes get hints**: "Hints print `npx hookagent` when the
 * CLI runs from a checkout, and `hookagent` when it is on the PATH". Installed as npm
 * installs it globally (or as `npm link` links it): `<prefix>/bin/hookagent` →
 * `../lib/node_modules/hookagent/bin/hookagent.cjs`, run as `hookagent` from the PATH.
 * Before (hunt 9), every hint still said `npx hookagent`, which outside the checkout would
 * fetch an unrelated registry package.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildCli, tempConfigDir } from '../support/cli';

beforeAll(() => buildCli(), 60_000);

const ROOT = join(__dirname, '..', '..');

test('run as `hookagent` from an npm global prefix, the hints say hookagent, not npx hookagent', () => {
  const prefix = mkdtempSync(join(tmpdir(), 'hookagent-prefix-'));
  mkdirSync(join(prefix, 'bin'));
  mkdirSync(join(prefix, 'lib', 'node_modules'), { recursive: true });
  symlinkSync(ROOT, join(prefix, 'lib', 'node_modules', 'hookagent'));
  symlinkSync('../lib/node_modules/hookagent/bin/hookagent.cjs', join(prefix, 'bin', 'hookagent'));
  const dir = tempConfigDir('', 'hookagent-global-');
  const env = { ...process.env, HOOKAGENT_CONFIG_DIR: dir, PATH: `${join(prefix, 'bin')}:${dirname(process.execPath)}:/usr/bin:/bin`, npm_lifecycle_event: '' };
  const result = spawnSync('hookagent', ['webhook', 'show', 'ghost'], { env, encoding: 'utf8' });
  expect(result.status).toBe(1);
  expect(result.stderr).toBe("error: No subscription named 'ghost'\nSee the names with 'hookagent webhook list', or create one with 'hookagent webhook subscribe <name>'.\n");
  rmSync(prefix, { recursive: true, force: true });
});
