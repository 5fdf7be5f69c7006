/**
 * The start of `JSON.stringify(value, null, indent)` without printing the rest. Prompts
 * show the first few thousand characters of payloads that print to tens of kilobytes
 * (a 20 KB pull request is 30 KB indented); printing it all to keep 4,000 characters was
 * a noticeable share of serve's CPU per event. Follows JSON.stringify's rules for what
 * JSON.parse produces (objects, arrays, strings, numbers, booleans, null); a value with a
 * `toJSON` method is handed to JSON.stringify itself.
 */

import { cutText } from '../cut-text';

// Thrown to stop printing: plain objects, not Errors (an Error captures a stack trace each time).
const ENOUGH = { reason: 'enough' };
const NOT_PLAIN = { reason: 'not plain' };

/** `text`: the first `limit` characters of the JSON text; `cut`: whether it was longer. */
export function jsonPrefix(value: unknown, limit: number, indent = 0): { text: string; cut: boolean } {
  const pieces: string[] = [];
  let length = 0;
  const emit = (piece: string) => {
    pieces.push(piece);
    length += piece.length;
    if (length > limit) throw ENOUGH;
  };
  const step = ' '.repeat(Math.min(10, Math.max(0, indent)));
  const write = (current: unknown, gap: string): boolean => {
    if (current !== null && typeof current === 'object' && typeof (current as { toJSON?: unknown }).toJSON === 'function') throw NOT_PLAIN;
    if (typeof current === 'string' || typeof current === 'number' || typeof current === 'boolean' || current === null) {
      emit(JSON.stringify(current));
      return true;
    }
    if (typeof current !== 'object') return false; // undefined, functions, symbols: skipped (null in arrays)
    const inner = gap + step;
    const open = step ? `\n${inner}` : '';
    const close = step ? `\n${gap}` : '';
    if (Array.isArray(current)) {
      if (current.length === 0) return emit('[]'), true;
      emit(`[${open}`);
      current.forEach((item, i) => {
        if (i > 0) emit(`,${open}`);
        if (!write(item, inner)) emit('null');
      });
      emit(`${close}]`);
      return true;
    }
    let first = true;
    for (const key of Object.keys(current)) {
      const item = (current as Record<string, unknown>)[key];
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      emit(`${first ? '{' : ','}${open}${JSON.stringify(key)}:${step ? ' ' : ''}`);
      first = false;
      write(item, inner);
    }
    emit(first ? '{}' : `${close}}`);
    return true;
  };
  try {
    if (!write(value, '')) return { text: 'undefined', cut: false };
  } catch (error) {
    if (error === NOT_PLAIN) {
      const text = JSON.stringify(value, null, indent) ?? 'undefined';
      return { text: cutText(text, limit), cut: text.length > limit };
    }
    if (error !== ENOUGH) throw error;
    return { text: cutText(pieces.join(''), limit), cut: true };
  }
  return { text: pieces.join(''), cut: false };
}
