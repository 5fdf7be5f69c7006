/**
 * How a payload path is written, in prompt templates and payload filters alike: dotted,
 * numeric segments index arrays (`alerts.0.labels.alertname`). JSONPath's forms never
 * resolve: `$.action` would look up a key named "$", `alerts[0].x` one named "alerts[0]".
 * Both parsers refuse them with the path to write (filters/parse.ts, template.ts); a
 * template stored before this check still renders, with a warning that names the path.
 */

/** What is wrong with a path, and the dotted path meant (as far as it can be told). */
export type PathMistake =
  /** `$.x`, `$[0]`, `$` (the whole payload: `dotted` is empty). */
  | { kind: 'root'; dotted: string }
  /** `x[0]`, `x['key']`. */
  | { kind: 'index'; dotted: string }
  /** `x[*].y`: every element; `dotted` names the first. */
  | { kind: 'wildcard'; dotted: string }
  /** `a..b`, `a.`, `.a`. */
  | { kind: 'empty' };

/** JSONPath's root: `$` alone or before `.` or `[` (a key such as `$schema` is a key). */
const ROOT = /^\$(?=[.[]|$)\.?/;
/** A bracketed index or key: `[0]`, `['key']`, `["key"]`, `[*]`. */
const BRACKET = /\[\s*(?:(\d+)|'([^'\]]*)'|"([^"\]]*)"|(\*))\s*\]/g;

/** `written` as it is written here: no leading `$`, `[n]` and `['key']` as `.n` and `.key`, `[*]` as the first element. */
export function dottedPath(written: string): string {
  return written
    .replace(ROOT, '')
    .replace(BRACKET, (_all, index?: string, single?: string, double?: string) => `.${index ?? single ?? double ?? '0'}`)
    .replace(/^\./, '');
}

/** Why `path` can never name a payload value, or undefined when it is written as paths are. */
export function pathMistake(path: string): PathMistake | undefined {
  if (ROOT.test(path)) return { kind: 'root', dotted: dottedPath(path) };
  const brackets = [...path.matchAll(BRACKET)];
  if (brackets.some((m) => m[4] !== undefined)) return { kind: 'wildcard', dotted: dottedPath(path) };
  if (brackets.length > 0) return { kind: 'index', dotted: dottedPath(path) };
  if (path.split('.').some((segment) => segment === '')) return { kind: 'empty' };
  return undefined;
}
