/**
 * How the user runs this CLI, for the commands hints print: `hookagent` when it is on the
 * PATH (a global or linked install), `npx hookagent` when it runs from a checkout
 * (`npm start`, `node bin/hookagent.cjs`), where `hookagent` alone is not found; followed
 * by the `--config-dir` this run was given when it is not the default, so that a hint
 * pasted as printed acts on the same store (hunt 5 D5).
 */
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { configDir as defaultConfigDir } from '../functions/core/config/file';

/** The program alone (`hookagent` or `npx hookagent`): what shell completion scripts name. */
export function programName(argv1: string | undefined = process.argv[1], env: NodeJS.ProcessEnv = process.env): string {
  if (env.npm_lifecycle_event) return 'npx hookagent';
  if (!argv1) return 'hookagent';
  const script = realPath(resolve(argv1));
  // The checkout's own bin (what `npx hookagent` runs inside it) does not count as the PATH.
  const localBin = join(dirname(dirname(script)), 'node_modules', '.bin');
  // On the PATH as `hookagent` (npm's global bin or npm link): the plain name works. Judged by
  // the file a PATH entry leads to (npm's bin is a symlink), not by how its path reads.
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir || resolve(dir) === localBin) continue;
    const entry = join(dir, 'hookagent');
    if (existsSync(entry) && realPath(entry) === script) return 'hookagent';
  }
  return 'npx hookagent';
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** The value of `--config-dir` on this command line (`--config-dir X` or `--config-dir=X`), if any. */
function configDirArgument(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') return undefined;
    if (arg === '--config-dir') return args[i + 1];
    if (arg.startsWith('--config-dir=')) return arg.slice('--config-dir='.length);
  }
  return undefined;
}

/** A path as a shell word: double-quoted when it holds anything a shell would split or expand. */
const shellWord = (path: string): string => (/^[A-Za-z0-9_./:@%+=,~-]+$/.test(path) ? path : `"${path.replace(/(["\\$`])/g, '\\$1')}"`);

/** ` --config-dir <dir>` when this run was given one other than the default ($HOOKAGENT_CONFIG_DIR, else ~/.hookagent). */
export function configDirSuffix(args: readonly string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): string {
  const given = configDirArgument(args);
  if (!given) return '';
  const dir = resolve(given);
  return dir === resolve(defaultConfigDir(undefined, env)) ? '' : ` --config-dir ${shellWord(dir)}`;
}

/** The command hints print: the program, then the `--config-dir` in use (when not the default). */
export function commandName(argv1: string | undefined = process.argv[1], env: NodeJS.ProcessEnv = process.env): string {
  return `${programName(argv1, env)}${configDirSuffix(process.argv.slice(2), env)}`;
}

/**
 * `text` with every quoted `hookagent …` command written as this CLI was started, so a
 * hint can be pasted as it is (`npx hookagent --config-dir … …` from a checkout).
 */
export function asInvoked(text: string, name: string = commandName()): string {
  return name === 'hookagent' ? text : text.replace(/(['(`])hookagent (?=[a-z])/g, `$1${name} `);
}
