/**
 * Hunt 12 D3 (templates): `--payload` (`webhook test`, `--dry-run`, `--send`) is read as the
 * service reads a request body (ingest/payload-body.ts): a leading UTF-8 byte order mark is
 * dropped, the JSON must be an object. Before, a file saved by Notepad or PowerShell (EF BB
 * BF first) was refused with "Unexpected token '﻿'", the offending character invisible.
 * Invisible characters in the error are now named by code point.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPayload } from '../../cli/webhook/test';

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'hookagent-tpl-payload-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fileOf = (name: string, bytes: Buffer): string => {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
};
const refusal = (value: string): string => {
  try {
    readPayload(value);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${JSON.stringify(value)} was read`);
};

test('a file that starts with a byte order mark is read as the service reads it', () => {
  const path = fileOf('bom.json', Buffer.concat([BOM, Buffer.from('{"action":"opened","issue":{"title":"Disk full"}}')]));
  expect(readPayload(path)).toEqual({ action: 'opened', issue: { title: 'Disk full' } });
});

test('inline JSON with a byte order mark too', () => {
  expect(readPayload('\ufeff{"a":1}')).toEqual({ a: 1 });
});

test('a byte order mark and malformed JSON: the error is about the JSON, not the mark', () => {
  const message = refusal(fileOf('bom-bad.json', Buffer.concat([BOM, Buffer.from('{"a":}')])));
  expect(message).toMatch(/^--payload is not valid JSON: Unexpected token '}'/);
  expect(message).not.toContain('\ufeff');
  expect(message).not.toContain('U+FEFF');
});

test('an invisible character the service would refuse is named by its code point', () => {
  const message = refusal('\u00a0{"a":1}');
  expect(message).toMatch(/^--payload is not valid JSON: /);
  expect(message).toContain("'<U+00A0>'");
  expect(message).not.toContain('\u00a0');
  expect(refusal(fileOf('zwsp.json', Buffer.from('{"a":\u200b1}')))).toContain("'<U+200B>'");
});

test('JSON that is no object is refused, saying what it is', () => {
  expect(refusal('[1, 2]')).toBe('--payload is a JSON array, not an object');
  expect(refusal(fileOf('null.json', Buffer.from('null')))).toBe('--payload is a JSON null, not an object');
});
