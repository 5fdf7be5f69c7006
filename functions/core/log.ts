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
    write(`${JSON.stringify({ level, time: new Date().toISOString(), message, ...base, ...fields })}\n`);
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
      .map(([k, v]) => `${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`);
    write(`${new Date().toISOString().slice(11, 19)} ${level.toUpperCase().padEnd(5)} ${message}${extras.length ? `  ${extras.join(' ')}` : ''}\n`);
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}
