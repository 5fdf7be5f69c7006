/** Where a stage's secrets live in SSM (a module of its own, so naming them loads no SDK client). */
export function ssmParameterName(stage: string, name: string): string {
  return `/hookagent/${stage}/${name}`;
}
