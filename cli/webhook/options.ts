/** Options that take several values, by repetition or commas (`--events a,b --events c`). */
export function listOption(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  const values = (Array.isArray(value) ? value : [value]).map(String);
  return values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v.length > 0);
}
