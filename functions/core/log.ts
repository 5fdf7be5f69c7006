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
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

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
