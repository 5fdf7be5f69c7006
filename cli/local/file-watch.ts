/**
 * A watch on a file itself, not on its directory: a change made through another path (the
 * target of a symlink, a single bind-mounted file written on the host) is reported only to
 * a watch on the file's own inode. A file replaced (an editor's rename over it) is another
 * inode: `arm` moves the watch to the file the path names now.
 */
import { statSync, watch, type FSWatcher } from 'node:fs';

/** A watch on each of `paths` (through a symlink, on its target); `arm` again after a change. */
export function watchFiles(paths: string[], changed: () => void): { arm(): void; close(): void } {
  const watches = new Map<string, { file: string; watcher: FSWatcher }>();
  const identity = (path: string): string | undefined => {
    try {
      const stat = statSync(path);
      return `${stat.dev}:${stat.ino}`;
    } catch {
      return undefined;
    }
  };
  const unwatch = (path: string) => {
    watches.get(path)?.watcher.close();
    watches.delete(path);
  };
  return {
    arm() {
      for (const path of paths) {
        const file = identity(path);
        if (watches.get(path)?.file === file) continue;
        unwatch(path);
        if (file === undefined) continue;
        try {
          const watcher = watch(path, changed);
          watcher.on('error', () => unwatch(path));
          watches.set(path, { file, watcher });
        } catch {
          // Gone since, or not watchable: the caller's other ways of seeing changes remain.
        }
      }
    },
    close() {
      for (const path of [...watches.keys()]) unwatch(path);
    },
  };
}
