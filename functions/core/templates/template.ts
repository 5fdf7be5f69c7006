/**
 * Prompt templates (DESIGN §2.4): `{dotted.path}` placeholders over the payload,
 * `{__raw__}` for the whole payload, `{{` / `}}` for literal braces. Values are inserted
 * in one pass, so braces inside payload values are never expanded.
 */
import { jsonPrefix } from './json-prefix';
import { pathMistake } from './path-form';

export const VALUE_CAP = 2_000;
export const RAW_CAP = 4_000;
export const TRUNCATED = '…[truncated]';

/** `at`: the 0-based offset of the placeholder's `{` in the template. */
type Token = { kind: 'text'; text: string } | { kind: 'placeholder'; path: string; source: string; at: number };

export interface TemplateProblem {
  code: 'template_invalid';
  message: string;
  /** 0-based offset in the template. */
  position: number;
}

interface Scan {
  tokens: Token[];
  problems: TemplateProblem[];
}

/** Splits a template; a stray brace becomes literal text plus a problem, never an exception. */
function scan(template: string): Scan {
  const tokens: Token[] = [];
  const problems: TemplateProblem[] = [];
  let text = '';
  let i = 0;
  while (i < template.length) {
    const ch = template[i];
    const next = template[i + 1];
    if (ch === '{' && next === '{') {
      text += '{';
      i += 2;
    } else if (ch === '}' && next === '}') {
      text += '}';
      i += 2;
    } else if (ch === '{') {
      const close = template.indexOf('}', i + 1);
      const open = template.indexOf('{', i + 1);
      if (close < 0 || (open >= 0 && open < close)) {
        problems.push({ code: 'template_invalid', position: i, message: `unclosed '{' at position ${i + 1}; write '{{' for a literal brace` });
        text += ch;
        i += 1;
        continue;
      }
      const source = template.slice(i, close + 1);
      const path = template.slice(i + 1, close).trim();
      if (path === '' || /\s/.test(path)) {
        problems.push({ code: 'template_invalid', position: i, message: `'${source}' at position ${i + 1} is not a placeholder; write {payload.path}, or '{{' and '}}' for literal braces` });
        text += source;
      } else {
        if (text) tokens.push({ kind: 'text', text });
        text = '';
        tokens.push({ kind: 'placeholder', path, source, at: i });
      }
      i = close + 1;
    } else if (ch === '}') {
      problems.push({ code: 'template_invalid', position: i, message: `unmatched '}' at position ${i + 1}; write '}}' for a literal brace` });
      text += ch;
      i += 1;
    } else {
      text += ch;
      i += 1;
    }
  }
  if (text) tokens.push({ kind: 'text', text });
  return { tokens, problems };
}

/**
 * What to write instead of a placeholder path that can never resolve (`alerts[0].x`,
 * `$.x`, `a..b`), by the payload filters' rule (path-form.ts); undefined for a good path.
 */
export function placeholderAdvice(path: string): string | undefined {
  const mistake = pathMistake(path);
  if (!mistake) return undefined;
  if (mistake.kind === 'root') return `paths are written without '$': ${mistake.dotted ? `write {${mistake.dotted}}` : 'the whole payload is {__raw__}'}`;
  if (mistake.kind === 'index') return `index arrays with a dot: write {${mistake.dotted}}`;
  if (mistake.kind === 'wildcard') return `[*] stands for every element (filters' any(…)), a placeholder inserts one value: write {${mistake.dotted}} for the first`;
  return 'it has an empty segment: write {dotted.path}';
}

/**
 * The placeholders of a template, or the first problem (used by `subscribe` and `update`):
 * a syntax error, else (`paths`) a path that can never resolve. Only there: a template
 * stored before the path check still renders (renderPrompt warns about it).
 */
export function checkTemplate(template: string, options: { paths: boolean } = { paths: true }): { ok: true; placeholders: string[] } | { ok: false; error: TemplateProblem } {
  const { tokens, problems } = scan(template);
  if (problems[0]) return { ok: false, error: problems[0] };
  for (const token of tokens) {
    if (token.kind !== 'placeholder' || !options.paths) continue;
    const advice = placeholderAdvice(token.path);
    if (advice) return { ok: false, error: { code: 'template_invalid', position: token.at, message: `'${token.source}' at position ${token.at + 1} never resolves; ${advice}` } };
  }
  const paths = tokens.flatMap((t) => (t.kind === 'placeholder' ? [t.path] : []));
  return { ok: true, placeholders: [...new Set(paths)] };
}

/** Looks a dotted path up; numeric segments index arrays. */
export function lookup(payload: unknown, path: string): { found: true; value: unknown } | { found: false } {
  let current: unknown = payload;
  for (const segment of path.split('.')) {
    if (Array.isArray(current) && /^\d+$/.test(segment)) {
      const index = Number(segment);
      if (index >= current.length) return { found: false };
      current = current[index];
    } else if (current !== null && typeof current === 'object' && !Array.isArray(current) && Object.hasOwn(current, segment)) {
      current = (current as Record<string, unknown>)[segment];
    } else {
      return { found: false };
    }
  }
  return current === undefined ? { found: false } : { found: true, value: current };
}

/**
 * A lone UTF-16 surrogate (`"\ud800"` is valid JSON, so a payload may hold one) is no
 * character: JSON.stringify escapes it, UTF-8 cannot encode it, and SQS and DynamoDB refuse
 * it (message-json.ts), so a prompt or `--agent none` reply carrying one could not be stored
 * or posted. It is inserted as U+FFFD, what any UTF-8 encoder writes for it.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Strings as they are (lone surrogates as U+FFFD); numbers, booleans and null as JSON; objects and arrays as JSON, cut. */
export function formatValue(value: unknown): string {
  if (typeof value === 'string') return value.replace(LONE_SURROGATE, '\ufffd');
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? String(value);
  const { text, cut: longer } = jsonPrefix(value, VALUE_CAP);
  return longer ? text + TRUNCATED : text;
}

export interface Rendered {
  text: string;
  /**
   * `text` in order, split into the template's own text (trusted: the operator wrote it)
   * and what was inserted from the payload (not trusted); the prompt fence uses it.
   */
  parts: Array<{ trusted: boolean; text: string }>;
  /** Placeholders whose path is absent (left literally in the text). */
  missing: string[];
  warnings: string[];
}

/** `; <advice>` for a missing placeholder whose path is written so that it never resolves, else ''. */
function missingAdvice(path: string): string {
  const advice = placeholderAdvice(path);
  return advice ? `; ${advice}` : '';
}

/** Renders a subscription's prompt over a payload. Never throws. */
export function renderPrompt(template: string | undefined, payload: unknown, event: string): Rendered {
  const raw = (): string => {
    const { text, cut: longer } = jsonPrefix(payload, RAW_CAP, 2);
    return text === 'undefined' ? 'null' : longer ? text + TRUNCATED : text;
  };
  if (template === undefined || template.trim() === '') {
    const payloadText = raw();
    return {
      text: `Event: ${event}\n\nPayload:\n${payloadText}`, missing: [], warnings: [],
      parts: [{ trusted: true, text: 'Event: ' }, { trusted: false, text: event }, { trusted: true, text: '\n\nPayload:\n' }, { trusted: false, text: payloadText }],
    };
  }
  const { tokens, problems } = scan(template);
  const missing: string[] = [];
  const parts: Rendered['parts'] = [];
  const add = (trusted: boolean, piece: string) => {
    const last = parts[parts.length - 1];
    if (last && last.trusted === trusted) last.text += piece;
    else if (piece !== '') parts.push({ trusted, text: piece });
  };
  for (const token of tokens) {
    if (token.kind === 'text') {
      add(true, token.text);
    } else if (token.path === '__raw__') {
      add(false, raw());
    } else {
      const found = lookup(payload, token.path);
      if (found.found) {
        add(false, formatValue(found.value));
      } else {
        add(true, token.source);
        if (!missing.includes(token.path)) missing.push(token.path);
      }
    }
  }
  const text = parts.map((p) => p.text).join('');
  const warnings = [
    ...problems.map((p) => p.message),
    ...missing.map((path) => `placeholder {${path}} not found in the payload; left as is${missingAdvice(path)}`),
  ];
  return { text, parts, missing, warnings };
}
