/** Options that take several values, by repetition or commas (`--events a,b --events c`). */
export function listOption(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  const values = (Array.isArray(value) ? value : [value]).map(String);
  return values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v.length > 0);
}

/**
 * Options whose value may start with `-`: numbers and durations a user may type negative,
 * text (a Markdown list as an `--agent none` message: `--prompt "- PR {pull_request.title}"`),
 * a Telegram group's chat id (`-100…`), and `--payload -` (standard input).
 */
const DASH_VALUE_OPTIONS = new Set([
  '--debounce', '--timeout', '--max-steps', '--max-runs-per-hour', '--max-tokens', '--daily-tokens',
  '--prompt', '--description', '--channel', '--chat-id', '--filter', '--payload',
]);

/** An argument yargs must read as an option (`--agent`, `-h`) or as the end of options (`--`), never as a value. */
export const optionShaped = (arg: string): boolean => arg === '--' || /^--?[A-Za-z]/.test(arg);

/**
 * yargs reads any argument that starts with `-` as options: `--debounce -5s` as the flags
 * -5 and -s, `--prompt "- item"` as no value at all ("needs a value"), `--payload -` as an
 * option named "". Such a value is joined to its option (`--prompt=- item`), as yargs takes
 * it. Its configuration has no per-option way to say so: `nargs-eats-options` makes every
 * option eat the next argument, so `--events --agent none` would store events "--agent"
 * instead of being the usage error it is. An option-shaped argument is left to yargs.
 */
export function joinSignedValues(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    // After `--` every argument is an argument: nothing is joined.
    if (arg === '--') return [...out, ...args.slice(i)];
    const next = args[i + 1];
    if (DASH_VALUE_OPTIONS.has(arg) && next !== undefined && next.startsWith('-') && !optionShaped(next)) {
      out.push(`${arg}=${next}`);
      i += 1;
    } else out.push(arg);
  }
  return out;
}
