import { programName } from './invocation';

/**
 * `hookagent completion [bash|zsh]`: yargs prints the script for the shell in $SHELL; a
 * named shell overrides it (yargs reads $SHELL when the parser is built, so this runs first).
 */
export function prepareCompletion(args: string[], env: NodeJS.ProcessEnv = process.env): string[] {
  const at = args.indexOf('completion');
  const shell = at >= 0 ? args[at + 1] : undefined;
  if (at >= 0 && shell !== undefined && !shell.startsWith('-') && shell !== 'bash' && shell !== 'zsh' && !args.includes('--get-yargs-completions')) {
    // fish, powershell…: a bash script would not work there.
    throw new UnsupportedShell(shell);
  }
  if (at < 0 || (shell !== 'bash' && shell !== 'zsh')) return args;
  if (shell === 'zsh') env.SHELL = '/bin/zsh';
  else {
    env.SHELL = '/bin/bash';
    delete env.ZSH_NAME;
  }
  return [...args.slice(0, at + 1), ...args.slice(at + 2)];
}

export class UnsupportedShell extends Error {
  /** `name`: the command as the user runs it (`npx hookagent` from a checkout). */
  constructor(readonly shell: string, name: string = programName()) {
    super(`completion supports bash and zsh, not '${shell}': ${name} completion bash >> ~/.bashrc, or ${name} completion zsh >> ~/.zshrc`);
  }
}

/**
 * `completion --help`: yargs' own completion command prints the script for any arguments,
 * `--help` included, so its help is written here (main.ts prints it before yargs runs).
 */
export function completionHelp(args: readonly string[], name: string = programName()): string | undefined {
  const positional = args.filter((a) => !a.startsWith('-'));
  if (positional[0] !== 'completion' || !args.some((a) => a === '--help' || a === '-h')) return undefined;
  return [
    `${name} completion [bash|zsh]`,
    '',
    'print a shell completion script: for the shell in $SHELL, or the one named',
    '',
    'Examples:',
    `  ${name} completion bash >> ~/.bashrc`,
    `  ${name} completion zsh >> ~/.zshrc`,
    '',
  ].join('\n');
}
