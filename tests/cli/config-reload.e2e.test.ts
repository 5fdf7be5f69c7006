/**
 * serve's configuration source (issue 23): config.yaml and .env are reloaded when they
 * change, validated first; an invalid edit keeps the running configuration and says why;
 * a CLI command can tell that serve runs with an older configuration.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fingerprintOf, loadConfig, parseDotEnv, publishConfigState, staleConfigNote, watchConfig, type LoadedConfig } from '../../cli/local/config-source';
import { acquireServeLock } from '../../functions/local/sqlite/serve-lock';

const CONFIG = 'webhooks:\n  github: { secret: ${GH_SECRET} }\n';

function dir(yaml = CONFIG, env?: string): string {
  const d = mkdtempSync(join(tmpdir(), 'hookagent-reload-'));
  writeFileSync(join(d, 'config.yaml'), yaml);
  if (env !== undefined) writeFileSync(join(d, '.env'), env);
  return d;
}

/** The next call of one of the watcher's handlers. */
function nextReload(configDir: string, fingerprint: string) {
  return new Promise<{ loaded?: LoadedConfig; rejected?: string; close(): void }>((resolve) => {
    const watcher = watchConfig(configDir, {}, fingerprint, {
      onChange: (loaded) => resolve({ loaded, close: () => watcher.close() }),
      onRejected: (_f, reason) => resolve({ rejected: reason, close: () => watcher.close() }),
    }, 20);
  });
}

describe('loading', () => {
  test('.env values resolve ${VAR}; the environment wins over the file', async () => {
    const d = dir(CONFIG, 'GH_SECRET=from-file\n');
    const fromFile = await loadConfig(d, {});
    expect(fromFile.ok && fromFile.value.config.webhooks.github?.secret).toEqual(['from-file']);
    const fromEnv = await loadConfig(d, { GH_SECRET: 'from-env' });
    expect(fromEnv.ok && fromEnv.value.config.webhooks.github?.secret).toEqual(['from-env']);
  });

  test('.env syntax: export, quotes, comments, junk lines', () => {
    expect([...parseDotEnv('# c\nexport A=1\nB="two words"\nC=\'3\'\nnot a line\n D = 4 \n')]).toEqual([['A', '1'], ['B', 'two words'], ['C', '3'], ['D', '4']]);
  });

  test('an invalid file is a clear error naming the key', async () => {
    const bad = await loadConfig(dir('webhooks: { github: { secret: literal } }\n'), {});
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error.message).toContain('webhooks.github.secret');
  });
});

describe('reloading', () => {
  test('a secret put into .env while serving applies without a restart', async () => {
    const d = dir(CONFIG, '');
    const start = await loadConfig(d, {});
    expect(start.ok).toBe(false); // GH_SECRET is not set yet
    const reload = nextReload(d, fingerprintOf(d));
    writeFileSync(join(d, '.env'), 'GH_SECRET=now-set\n');
    const result = await reload;
    result.close();
    expect(result.loaded?.config.webhooks.github?.secret).toEqual(['now-set']);
  });

  test('an invalid edit is refused with its reason, and the running configuration stays', async () => {
    const d = dir(CONFIG, 'GH_SECRET=x\n');
    const reload = nextReload(d, fingerprintOf(d));
    writeFileSync(join(d, 'config.yaml'), 'webhooks:\n  github: { secrett: ${GH_SECRET} }\n');
    const result = await reload;
    result.close();
    expect(result.loaded).toBeUndefined();
    expect(result.rejected).toMatch(/secrett/);
  });

  test('the CLI is told when serve runs with an older or a refused configuration', async () => {
    const d = dir(CONFIG, 'GH_SECRET=x\n');
    const data = mkdtempSync(join(tmpdir(), 'hookagent-data-'));
    expect(staleConfigNote(d, data)).toBeUndefined(); // no serve
    // This process plays the running serve: it holds the data dir's lock, as serve does (a live pid alone is not one).
    const lock = acquireServeLock(data);
    publishConfigState(data, { pid: process.pid, fingerprint: fingerprintOf(d), loaded_at: '2026-11-23T10:00:00Z' });
    expect(staleConfigNote(d, data)).toBeUndefined(); // current
    const old = fingerprintOf(d);
    writeFileSync(join(d, '.env'), 'GH_SECRET=y\n');
    expect(staleConfigNote(d, data)).toContain('older configuration');
    publishConfigState(data, { pid: process.pid, fingerprint: old, loaded_at: '2026-11-23T10:00:00Z', rejected: { fingerprint: fingerprintOf(d), reason: 'webhooks.github: unknown key' } });
    expect(staleConfigNote(d, data)).toContain('refused the edited files because webhooks.github: unknown key');
    lock.release();
    // Its pid is still alive, but no serve holds the lock: nothing runs to be stale.
    expect(staleConfigNote(d, data)).toBeUndefined();
  });
});
