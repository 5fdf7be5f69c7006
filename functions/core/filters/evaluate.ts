/**
 * Evaluation of payload filters over a parsed payload. Never throws; regexes run on
 * RE2 (linear in the subject's length), so a hostile payload cannot make a filter slow.
 */
import { lookup } from '../templates/template';
import { isNumberLiteral, parseFilter, type Condition, type Filter, type Literal } from './parse';

export interface FilterResult {
  filter: string;
  passed: boolean;
  /** What the payload held, in short, for `webhook test` and the request log. */
  detail: string;
}

/** Regex subjects longer than this are matched on their first this-many characters. */
export const MATCH_SUBJECT_CAP = 1024 * 1024;

function short(value: unknown): string {
  const text = value === undefined ? 'absent' : typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

const NON_ASCII = /[^\u0000-\u007f]/;
/** NFC form; ASCII text (most payload values) is its own and is not copied. */
const nfc = (text: string) => (NON_ASCII.test(text) ? text.normalize('NFC') : text);

/**
 * README "Payload filters": a payload number equals a number literal of the same value
 * (`42 == 42.0`); a payload string equals a number literal only as the text written
 * (`"1.10" == 1.10`, never `"1.1" == 1.10`): version strings and tags are text. A payload
 * number or boolean equals a word or quoted value that is its JSON text (`42 == "42"`).
 */
function equals(actual: unknown, expected: Literal): boolean {
  if (isNumberLiteral(expected)) {
    if (typeof actual === 'number') return actual === expected.value;
    return typeof actual === 'string' && actual === expected.text;
  }
  if (actual === expected) return true;
  // Literals are NFC (parse.ts): "é" written composed or decomposed is the same text.
  if (typeof actual === 'string' && typeof expected === 'string') return nfc(actual) === expected;
  if (typeof actual === 'string' && typeof expected === 'boolean') return actual === String(expected);
  if (typeof expected === 'string' && (typeof actual === 'number' || typeof actual === 'boolean')) return String(actual) === expected;
  return false;
}

/** A number written as JSON and filters write one (`42`, `-1.5`, `2e3`; spaces around it ignored). */
const DECIMAL = /^\s*-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

/**
 * A payload string counts as a number for the orderings only when it is written in decimal:
 * JavaScript's Number() would also read "0x1F", "0b101" and "0o17" (an error code, a
 * bitmask), which no filter means as 31, 5 or 15 (hunt 7).
 */
function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && DECIMAL.test(value) && Number.isFinite(Number(value))) return Number(value);
  return undefined;
}

function valueAt(root: unknown, path: string): { found: boolean; value: unknown } {
  if (path === '') return { found: root !== undefined, value: root };
  const hit = lookup(root, path);
  return hit.found ? { found: true, value: hit.value } : { found: false, value: undefined };
}

function holds(condition: Condition, root: unknown): boolean {
  const { found, value } = valueAt(root, condition.path);
  switch (condition.kind) {
    case 'exists':
      return condition.negated ? !found || value === null : found && value !== null;
    case 'in':
      return found && condition.values.some((v) => equals(value, v));
    case 'match': {
      if (!found || value === null || typeof value === 'object') return false;
      const subject = String(value);
      return condition.regex.test(nfc(subject.length > MATCH_SUBJECT_CAP ? subject.slice(0, MATCH_SUBJECT_CAP) : subject));
    }
    case 'compare': {
      if (condition.op === '==') return found && equals(value, condition.value);
      if (condition.op === '!=') return !found || !equals(value, condition.value);
      const n = asNumber(value);
      // The parser admits only number literals after an ordering operator.
      const limit = isNumberLiteral(condition.value) ? condition.value.value : NaN;
      if (!found || n === undefined) return false;
      switch (condition.op) {
        case '<': return n < limit;
        case '<=': return n <= limit;
        case '>': return n > limit;
        case '>=': return n >= limit;
      }
    }
  }
  return false;
}

export function evaluateFilter(filter: Filter, payload: unknown): FilterResult {
  if (filter.kind === 'simple') {
    const passed = holds(filter.condition, payload);
    return { filter: filter.text, passed, detail: `${filter.condition.path} is ${short(valueAt(payload, filter.condition.path).value)}` };
  }
  const { found, value } = valueAt(payload, filter.array);
  if (!found || !Array.isArray(value)) return { filter: filter.text, passed: false, detail: `${filter.array} is ${found ? 'not an array' : 'absent'}` };
  const index = value.findIndex((element) => holds(filter.condition, element));
  return { filter: filter.text, passed: index >= 0, detail: index >= 0 ? `element ${index} of ${filter.array} matches` : `no element of ${filter.array} (${value.length}) matches` };
}

/** Compiled filters by their text: ingest evaluates the same few strings on every request. */
const compiled = new Map<string, Filter>();

function compile(text: string): Filter {
  let filter = compiled.get(text);
  if (!filter) {
    filter = parseFilter(text);
    if (compiled.size >= 1000) compiled.clear();
    compiled.set(text, filter);
  }
  return filter;
}

/** Every filter's result, in order. A stored filter that no longer parses fails (closed). */
export function evaluateFilters(texts: readonly string[] | undefined, payload: unknown): FilterResult[] {
  return (texts ?? []).map((text) => {
    try {
      return evaluateFilter(compile(text), payload);
    } catch (error) {
      return { filter: text, passed: false, detail: error instanceof Error ? error.message : String(error) };
    }
  });
}

/** The first filter that fails, or undefined when all hold (stops at the first failure). */
export function firstFailingFilter(texts: readonly string[] | undefined, payload: unknown): FilterResult | undefined {
  for (const text of texts ?? []) {
    const [result] = evaluateFilters([text], payload);
    if (result && !result.passed) return result;
  }
  return undefined;
}
