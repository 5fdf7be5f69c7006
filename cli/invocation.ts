/**
 * How the user runs this CLI, for the commands hints print: `hookagent` when it is on the
 * PATH (a global or linked install), `npx hookagent` when it runs from a checkout
 * (`npm start`, `node bin/hookagent.cjs`), where `hookagent` alone is not found.
 */
import { existsSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';

export function commandName(argv1: string | undefined = process.argv[1], env: NodeJS.ProcessEnv = process.env): string {
  if (env.npm_lifecycle_event) return 'npx hookagent';
  if (!argv1) return 'hookagent';
  const script = resolve(argv1);
  // On the PATH as `hookagent` (npm's global bin or npm link): the plain name works.
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, 'hookagent')) && !dir.includes(dirname(dirname(script)))) return 'hookagent';
  }
  return 'npx hookagent';
}

/**
 * `text` with every quoted `hookagent …` command written as this CLI was started, so a
 * hint can be pasted as it is (`npx hookagent …` from a checkout).
 */
export function asInvoked(text: string, name: string = commandName()): string {
  return name === 'hookagent' ? text : text.replace(/(['(`])hookagent (?=[a-z])/g, `$1${name} `);
}
