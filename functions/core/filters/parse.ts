/**
 * Payload filters (issue 17): `--filter <expression>`, all of a subscription's must hold.
 *
 *   path == value | != | < | <= | > | >=        (the four orderings compare numbers)
 *   path in [a, b, …]
 *   path =~ /regex/flags                         (flags i, m, s; RE2 syntax, linear time)
 *   exists path | !exists path
 *   any(path[*].field <op> value)                (any element of an array; `.field` optional)
 *
 * Paths are written as in prompt templates: dotted, numeric segments index arrays.
 * Values: "text" or 'text', numbers, true, false, null, or a bare word (a string).
 * A number keeps the text it was written as: a payload string equals it only when it is
 * that same text (`"1.0" == 1.0`, not `"1" == 1.0`), a payload number when the values are
 * equal (see evaluate.ts).
 * Errors name the 1-based column where the problem is.
 */
import type { RE2JS } from 're2js';
import { dottedPath, pathMistake } from '../templates/path-form';

/**
 * RE2 (linear time) is loaded on the first regex filter, not at start: most subscriptions
 * have none, and the Lambda bundles ship it beside index.js (scripts/build-lambda.mjs) to
 * keep cold starts small.
 */
let re2: typeof RE2JS | undefined;
function loadRe2(): typeof RE2JS {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  re2 ??= (require('re2js') as typeof import('re2js')).RE2JS;
  return re2;
}

export type Op = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | '=~';
/** A number as written: `value` for payload numbers and orderings, `text` for payload strings. */
export interface NumberLiteral {
  kind: 'number';
  value: number;
  text: string;
}
export type Literal = string | NumberLiteral | boolean | null;

export const isNumberLiteral = (value: Literal): value is NumberLiteral => typeof value === 'object' && value !== null;

export type Condition =
  | { kind: 'compare'; path: string; op: Exclude<Op, 'in' | '=~'>; value: Literal }
  | { kind: 'in'; path: string; values: Literal[] }
  | { kind: 'match'; path: string; regex: RE2JS; source: string }
  | { kind: 'exists'; path: string; negated: boolean };

export type Filter =
  | { kind: 'simple'; text: string; condition: Condition }
  | { kind: 'any'; text: string; array: string; condition: Condition };

export class FilterSyntaxError extends Error {
  constructor(readonly text: string, readonly column: number, readonly detail: string) {
    super(`Invalid filter ${JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text)} at column ${column}: ${detail}`);
  }
}

/** Bounds that keep parsing and matching cheap whatever a subscription says. */
export const FILTER_LIMITS = { expressionLength: 1_000, regexLength: 300, listItems: 100, filters: 20 } as const;

const PATH = /^[^\s=!<>[\](),~'"]+/;
const NUMBER = /^-?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?/;
const BARE = /^[^\s,[\]()'"]+/;

class Parser {
  pos = 0;
  constructor(readonly text: string) {}

  fail(detail: string, at = this.pos): never {
    throw new FilterSyntaxError(this.text, at + 1, detail);
  }
  skip(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos] as string)) this.pos += 1;
  }
  rest(): string {
    return this.text.slice(this.pos);
  }
  eat(token: string): boolean {
    this.skip();
    if (this.text.startsWith(token, this.pos)) {
      this.pos += token.length;
      return true;
    }
    return false;
  }
  keyword(word: string): boolean {
    this.skip();
    const after = this.text[this.pos + word.length];
    if (this.text.startsWith(word, this.pos) && (after === undefined || /[\s(]/.test(after))) {
      this.pos += word.length;
      return true;
    }
    return false;
  }
  /** True when `word` here is followed by an operator: then it is a path, not a keyword. */
  operatorAfter(word: string): boolean {
    this.skip();
    return this.text.startsWith(word, this.pos) && /^\s*(?:==|!=|<|>|=~|in(?:\s|\[|$))/.test(this.text.slice(this.pos + word.length)) && !/^\s+in$/.test(this.text.slice(this.pos + word.length));
  }
  path(what = 'a payload path such as pull_request.draft'): string {
    this.skip();
    const m = PATH.exec(this.rest());
    if (!m) this.fail(`expected ${what}`);
    const path = m[0];
    const start = this.pos;
    // The templates' rule (path-form.ts): JSONPath's `$.action` would look up a key named "$" and never match.
    const mistake = pathMistake(path);
    if (mistake?.kind === 'root') this.fail(`paths are written as in prompt templates, without '$': write ${dottedPath(this.written(path, start + path.length)) || 'action'} (array elements: alerts.0.labels.alertname)`, start);
    if (mistake?.kind === 'empty') this.fail(`'${path}' has an empty segment; write dotted.path`, start);
    this.pos += path.length;
    return path;
  }
  /** `path` with the indexes and segments written after it from `at` (`alerts` + `[0].labels.x`). */
  written(path: string, at: number): string {
    return `${path}${/^(?:\[[^\]\s]*\]|\.[^\s=!<>[\](),~'"]+)+/.exec(this.text.slice(at))?.[0] ?? ''}`;
  }
  op(): Op {
    this.skip();
    for (const op of ['==', '!=', '<=', '>=', '=~', '<', '>'] as const) if (this.eat(op)) return op;
    if (this.keyword('in')) return 'in';
    return this.fail(this.pos >= this.text.length ? 'expected an operator (==, !=, <, <=, >, >=, in, =~) after the path' : `expected an operator (==, !=, <, <=, >, >=, in, =~), found '${this.text[this.pos]}'`);
  }
  literal(): Literal {
    this.skip();
    const start = this.pos;
    const ch = this.text[this.pos];
    if (ch === undefined) this.fail('expected a value');
    if ('=<>!~'.includes(ch)) this.fail(`expected a value, found '${ch}'`);
    if (ch === '"' || ch === "'") {
      let out = '';
      let i = this.pos + 1;
      while (i < this.text.length && this.text[i] !== ch) {
        if (this.text[i] === '\\' && i + 1 < this.text.length) i += 1;
        out += this.text[i];
        i += 1;
      }
      if (i >= this.text.length) this.fail(`unclosed string: add the closing ${ch}`, start);
      this.pos = i + 1;
      return out.normalize('NFC');
    }
    const number = NUMBER.exec(this.rest());
    const bare = BARE.exec(this.rest());
    if (number && (!bare || bare[0] === number[0])) {
      const value = Number(number[0]);
      // 1e999 would compare as Infinity: refused rather than matched against the text "Infinity".
      if (!Number.isFinite(value)) this.fail(`${number[0]} is too large a number; quote it to compare text: "${number[0]}"`, start);
      this.pos += number[0].length;
      return { kind: 'number', value, text: number[0] };
    }
    if (!bare) this.fail(`expected a value, found '${ch}'`);
    this.pos += bare[0].length;
    if (bare[0] === 'true') return true;
    if (bare[0] === 'false') return false;
    if (bare[0] === 'null') return null;
    return bare[0].normalize('NFC');
  }
  list(): Literal[] {
    this.skip();
    const open = this.pos;
    if (!this.eat('[')) this.fail("expected '[' to start the list, e.g. in [opened, reopened]");
    const values: Literal[] = [];
    if (this.eat(']')) this.fail('the list is empty', open);
    for (;;) {
      values.push(this.literal());
      if (values.length > FILTER_LIMITS.listItems) this.fail(`more than ${FILTER_LIMITS.listItems} values in the list`);
      if (this.eat(']')) return values;
      if (!this.eat(',')) this.fail(this.pos >= this.text.length ? "unclosed list: add ']'" : "expected ',' or ']' in the list");
    }
  }
  regex(): { regex: RE2JS; source: string } {
    this.skip();
    const start = this.pos;
    if (this.text[this.pos] !== '/') this.fail('expected a regular expression written /pattern/flags');
    let i = this.pos + 1;
    let pattern = '';
    while (i < this.text.length && this.text[i] !== '/') {
      if (this.text[i] === '\\' && i + 1 < this.text.length) {
        pattern += this.text[i + 1] === '/' ? '/' : `\\${this.text[i + 1]}`;
        i += 2;
      } else {
        pattern += this.text[i];
        i += 1;
      }
    }
    if (i >= this.text.length) this.fail("unclosed regular expression: add the closing '/'", start);
    if (pattern.length === 0) this.fail('the regular expression is empty', start);
    if (pattern.length > FILTER_LIMITS.regexLength) this.fail(`the regular expression is longer than ${FILTER_LIMITS.regexLength} characters`, start);
    i += 1;
    const flagsAt = i;
    const flags = /^[a-z]*/.exec(this.text.slice(i))?.[0] ?? '';
    let bits = 0;
    for (const [k, flag] of [...flags].entries()) {
      if (flag === 'i') bits |= loadRe2().CASE_INSENSITIVE;
      else if (flag === 'm') bits |= loadRe2().MULTILINE;
      else if (flag === 's') bits |= loadRe2().DOTALL;
      else this.fail(`unknown regex flag '${flag}' (use i, m or s)`, flagsAt + k);
    }
    this.pos = flagsAt + flags.length;
    try {
      return { regex: loadRe2().compile(pattern.normalize('NFC'), bits), source: this.text.slice(start, this.pos) };
    } catch (error) {
      const message = error instanceof Error ? error.message.replace(/^error parsing regexp: /, '') : String(error);
      return this.fail(`invalid regular expression: ${message} (RE2 syntax: no backreferences or lookaround)`, start);
    }
  }
  condition(path: string): Condition {
    const opAt = this.pos;
    this.skip();
    if (this.text[this.pos] === '[') this.failIndex(path);
    const op = this.op();
    if (op === 'in') return { kind: 'in', path, values: this.list() };
    if (op === '=~') return { kind: 'match', path, ...this.regex() };
    const valueAt = this.pos;
    const value = this.literal();
    if (op !== '==' && op !== '!=' && !isNumberLiteral(value)) {
      this.skip();
      this.fail(`${op} compares numbers; ${JSON.stringify(value)} is not a number`, valueAt + (this.text.slice(valueAt).length - this.text.slice(valueAt).trimStart().length));
    }
    void opAt;
    return { kind: 'compare', path, op, value };
  }
  /** `alerts[0].x`: index with a dot, as templates do (`[*]` belongs to any(…)). */
  failIndex(path: string): never {
    const written = this.written(path, this.pos);
    const hint = written.includes('[*]') ? `any(${path}[*]… == value) for any element` : `write ${dottedPath(written)}`;
    return this.fail(`index arrays with a dot, as in prompt templates: ${hint}`);
  }
  end(): void {
    this.skip();
    if (this.pos < this.text.length) this.fail(`unexpected '${this.rest().slice(0, 20)}' after the end of the condition; write one condition per --filter`);
  }
}

export function parseFilter(text: string): Filter {
  if (text.length > FILTER_LIMITS.expressionLength) throw new FilterSyntaxError(text, FILTER_LIMITS.expressionLength + 1, `longer than ${FILTER_LIMITS.expressionLength} characters`);
  const p = new Parser(text);
  p.skip();
  if (p.pos >= text.length) p.fail('empty filter; write e.g. pull_request.draft == false');
  let filter: Filter;
  // `exists == true` compares a payload key named exists; `exists <path>` is the keyword.
  if (p.keyword('!exists')) filter = { kind: 'simple', text, condition: { kind: 'exists', path: p.path(), negated: true } };
  else if (!p.operatorAfter('exists') && p.keyword('exists')) filter = { kind: 'simple', text, condition: { kind: 'exists', path: p.path(), negated: false } };
  else if (p.eat('any(')) {
    const array = p.path('an array path such as pull_request.labels');
    if (!p.eat('[*]')) p.fail("expected '[*]' after the array path, as in any(pull_request.labels[*].name == bug)");
    let field = '';
    p.skip();
    if (text[p.pos] === '.') {
      p.pos += 1;
      field = p.path('a field of the array elements');
    }
    const condition = p.condition(field);
    if (!p.eat(')')) p.fail("expected ')' to close any(");
    filter = { kind: 'any', text, array, condition };
  } else {
    const path = p.path();
    filter = { kind: 'simple', text, condition: p.condition(path) };
  }
  p.end();
  return filter;
}

/** Parses every filter; the first error thrown names the filter and its column. */
export function parseFilters(texts: readonly string[]): Filter[] {
  if (texts.length > FILTER_LIMITS.filters) throw new FilterSyntaxError(texts[FILTER_LIMITS.filters] ?? '', 1, `more than ${FILTER_LIMITS.filters} filters on one subscription`);
  return texts.map(parseFilter);
}
