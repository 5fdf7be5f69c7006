/**
 * The config dir holds the credentials: `.env` (tokens, webhook secrets) and config.yaml. It
 * is created the owner's alone (first-run.ts), but one an earlier version made 0755 or the
 * user made, with an `echo … >> .env` under umask 022, left them readable by every local
 * user (hunt 11 D1). serve at start and every CLI command tighten them, as ownerOnly
 * (store-files.ts) does the store; what cannot be tightened is said.
 */
import { chmodSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';

const OTHERS = 0o077;

/** The file at `path` (followed), if there is one to look at. */
function statOf(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    // Missing, or a path through something that is no directory: nothing to tighten there.
    return undefined;
  }
}

/** Owned by this process's user (what it may chmod, and what is its to tighten). */
function ours(stat: Stats): boolean {
  return process.getuid === undefined || stat.uid === process.getuid();
}

/**
 * Sets `mode` on `path` when it is ours and others may read it. Returns the problem when it
 * is still open to others afterwards (a file system that refuses chmod, or ignores it).
 */
function tighten(path: string, mode: number): string | undefined {
  const how = `chmod ${mode.toString(8)}`;
  const stat = statOf(path);
  if (!stat || (stat.mode & OTHERS) === 0 || !ours(stat)) return undefined;
  let reason = 'the file system kept its mode';
  try {
    chmodSync(path, mode);
  } catch (error) {
    reason = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
  }
  const after = statOf(path);
  if (!after || (after.mode & OTHERS) === 0) return undefined;
  return `${path} can be read by other local users (mode ${(after.mode & 0o777).toString(8)}) and could not be made the owner's alone (${how}: ${reason}); keep it on a file system that keeps file modes`;
}

/**
 * Tightens the config dir to 0700 when it is hookagent's (it holds config.yaml or data/), and
 * its `.env` and config.yaml to 0600. Returns what is still readable by others, one sentence
 * each naming the path (serve's start output, `status`'s attention lines).
 */
export function tightenConfigDir(configDir: string): string[] {
  const hookagents = ['config.yaml', 'data'].some((name) => statOf(join(configDir, name)) !== undefined) && statOf(configDir)?.isDirectory();
  const modes: Array<[string, number]> = [...(hookagents ? [[configDir, 0o700] as [string, number]] : []), [join(configDir, '.env'), 0o600], [join(configDir, 'config.yaml'), 0o600]];
  return modes.flatMap(([path, mode]) => tighten(path, mode) ?? []);
}
