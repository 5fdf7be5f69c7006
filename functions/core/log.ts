/**
 * Structured logging. Every line is one JSON object carrying the event id and
 * subscription where there is one; Powertools Logger (Lambda) and the local runtime's
 * logger both fit this interface.
 */
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** A logger that adds `fields` to every line (the event id and subscription of one message). */
  child?(fields: LogFields): Logger;
}

/** `logger.child(fields)` where the logger has it, else a wrapper that merges the fields into every line. */
export function childLogger(logger: Logger, fields: LogFields): Logger {
  if (logger.child) return logger.child(fields);
  const merged = (level: 'debug' | 'info' | 'warn' | 'error') => (message: string, extra?: LogFields) => logger[level](message, { ...fields, ...extra });
  return { debug: merged('debug'), info: merged('info'), warn: merged('warn'), error: merged('error'), child: (more) => childLogger(logger, { ...fields, ...more }) };
}

/**
 * Characters a terminal or log viewer may act on: C0 controls (ESC starts terminal escape
 * sequences), DEL, C1 controls (U+009B is a one-character CSI), the line and paragraph
 * separators, and the bidirectional overrides that reorder what a reader sees. Payload
 * text reaches log lines (replies, reasons, names), so no log format writes them raw.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const HAS_CONTROL = new RegExp(CONTROL.source);
/** The same minus C0, which JSON.stringify already escapes. */
const CONTROL_AFTER_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const SHORT_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const unicodeEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Text with every control character written as a visible escape (`\n`, `\u001b`, `\u009b`). */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, (c) => SHORT_ESCAPES[c] ?? unicodeEscape(c));
}

/** Like escapeControl, but line breaks and tabs stay: multi-line text printed for a person (`webhook test`). */
export function escapeTerminal(text: string): string {
  return text.replace(CONTROL, (c) => (c === '\n' || c === '\t' ? c : SHORT_ESCAPES[c] ?? unicodeEscape(c)));
}

/** JSON text with the controls JSON leaves raw escaped too (still valid JSON, same value). */
export function safeJson(value: unknown): string {
  return (JSON.stringify(value) ?? String(value)).replace(CONTROL_AFTER_JSON, unicodeEscape);
}

/** Strings (also inside objects and arrays) with their control characters escaped, for loggers that print values as they are. */
export function escapeFields(fields: LogFields): LogFields {
  const clean = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return escapeControl(value);
    if (value === null || typeof value !== 'object' || depth > 8) return value;
    if (Array.isArray(value)) return value.map((v) => clean(v, depth + 1));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [escapeControl(k), clean(v, depth + 1)]));
  };
  return clean(fields, 0) as LogFields;
}

/** Wraps a logger that writes values raw (Powertools on Lambda): every string is escaped first. */
export function escapingLogger(inner: Logger): Logger {
  return {
    debug: (message, fields) => inner.debug(escapeControl(message), fields && escapeFields(fields)),
    info: (message, fields) => inner.info(escapeControl(message), fields && escapeFields(fields)),
    warn: (message, fields) => inner.warn(escapeControl(message), fields && escapeFields(fields)),
    error: (message, fields) => inner.error(escapeControl(message), fields && escapeFields(fields)),
  };
}

type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** JSON lines to a writable (stderr by default), for tests, CLI and local runs. */
export function jsonLogger(
  write: (line: string) => void = (line) => process.stderr.write(line),
  minimum: Level = 'info',
  base: LogFields = {},
): Logger {
  const emit = (level: Level) => (message: string, fields: LogFields = {}) => {
    if (ORDER[level] < ORDER[minimum]) return;
    write(`${safeJson({ level, time: new Date().toISOString(), message, ...base, ...fields })}\n`);
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error'), child: (fields) => jsonLogger(write, minimum, { ...base, ...fields }) };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silentLogger };

/** Lines for a person at a terminal: time, level, message, then key=value fields. */
export function textLogger(write: (line: string) => void = (line) => process.stderr.write(line), minimum: Level = 'info'): Logger {
  const emit = (level: Level) => (message: string, fields: LogFields = {}) => {
    if (ORDER[level] < ORDER[minimum]) return;
    const extras = Object.entries(fields)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${escapeControl(k)}=${typeof v === 'string' && /^[^\s"\\]+$/.test(v) && !HAS_CONTROL.test(v) ? v : safeJson(v)}`);
    write(`${new Date().toISOString().slice(11, 19)} ${level.toUpperCase().padEnd(5)} ${escapeControl(message)}${extras.length ? `  ${extras.join(' ')}` : ''}\n`);
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}
