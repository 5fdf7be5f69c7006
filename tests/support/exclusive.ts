/**
 * One at a time across jest's workers: `osls package` builds into the checkout's own
 * dist/lambda and .build (serverless.yml names those paths), so two packagings running at
 * once would zip each other's bundles and prepared configuration. The lock is a directory
 * in the run's temporary directory (tests/support/temp-dir.cjs); a waiter is woken by
 * fs.watch when it goes, with no polling interval.
 */
import { existsSync, mkdirSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function released(runDir: string, lock: string): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(runDir, () => {
      if (existsSync(lock)) return;
      watcher.close();
      resolve();
    });
    // Released between the failed mkdir and the watch: no event would come.
    if (!existsSync(lock)) {
      watcher.close();
      resolve();
    }
  });
}

export async function exclusively<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const runDir = process.env.HOOKAGENT_TEST_TMPDIR ?? tmpdir();
  const lock = join(runDir, `${name}.lock`);
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      await released(runDir, lock);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** `osls package` runs in the checkout: see above. */
export const oneBuildAtATime = <T>(fn: () => Promise<T>): Promise<T> => exclusively('osls-package', fn);
