/** Options that take several values, by repetition or commas (`--events a,b --events c`). */
export function listOption(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  const values = (Array.isArray(value) ? value : [value]).map(String);
  return values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v.length > 0);
}

/** Options whose value is a number or a duration, which a user may type negative. */
const SIGNED_VALUE_OPTIONS = new Set(['--debounce', '--timeout', '--max-steps', '--max-runs-per-hour', '--max-tokens', '--daily-tokens']);

/**
 * yargs reads `--debounce -5s` as the flags -5 and -s ("unknown option -5"): join such a
 * value to its option so the option's own check answers with its range. `--payload -`
 * (read the payload from standard input) is joined the same way.
 */
export function joinSignedValues(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const next = args[i + 1];
    // `--payload -` (standard input) too: yargs reads a lone `-` as an option named "".
    if ((SIGNED_VALUE_OPTIONS.has(arg) && next !== undefined && /^-\d/.test(next)) || (arg === '--payload' && next === '-')) {
      out.push(`${arg}=${next}`);
      i += 1;
    } else out.push(arg);
  }
  return out;
}
