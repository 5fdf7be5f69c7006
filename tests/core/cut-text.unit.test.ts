/** Every cut of text to a length keeps whole characters: an emoji at the cut is dropped whole, never halved. */
import fc from 'fast-check';
import { cutText } from '../../functions/core/cut-text';
import { fitReply } from '../../functions/core/delivery/http';
import { splitMessage } from '../../functions/core/delivery/split';
import { capText } from '../../functions/core/agent/run-record';
import { jsonPrefix } from '../../functions/core/templates/json-prefix';
import { RAW_CAP, VALUE_CAP, renderPrompt } from '../../functions/core/templates/template';
import { boundTexts, eventRecord, STORED_TEXT_CAP } from '../../functions/core/worker/record';

const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const wellFormed = (text: string) => !LONE.test(text);

test('cutText: at most limit units, a prefix, never half a surrogate pair', () => {
  expect(cutText('ab🎉', 3)).toBe('ab');
  expect(cutText('ab🎉', 4)).toBe('ab🎉');
  expect(cutText('ab🎉c', 4)).toBe('ab🎉');
  expect(cutText('🎉', 1)).toBe('');
  expect(cutText('abc', 0)).toBe('');
  fc.assert(fc.property(fc.string({ unit: 'grapheme' }), fc.nat(60), (text, limit) => {
    const cut = cutText(text, limit);
    expect(text.startsWith(cut)).toBe(true);
    expect(cut.length).toBeLessThanOrEqual(limit);
    expect(cut.length).toBeGreaterThanOrEqual(Math.min(text.length, limit) - 1);
    expect(wellFormed(cut)).toBe(true);
  }), { numRuns: 2000 });
});

test('a placeholder\'s JSON cut at 2,000 and {__raw__} at 4,000 end on a whole emoji', () => {
  const object = { s: `${'x'.repeat(VALUE_CAP - 7)}${'🎉'.repeat(10)}` };
  const value = renderPrompt('O<{o}>', { o: object }, 'custom');
  expect(wellFormed(value.text)).toBe(true);
  expect(value.text).toMatch(/x…\[truncated\]>$/);
  const raw = renderPrompt('{__raw__}', { s: `${'x'.repeat(RAW_CAP - 11)}${'😀'.repeat(10)}` }, 'custom');
  expect(wellFormed(raw.text)).toBe(true);
  expect(raw.text.endsWith('…[truncated]')).toBe(true);
  fc.assert(fc.property(fc.jsonValue({ maxDepth: 3 }), fc.nat(300), (json, limit) => {
    expect(wellFormed(jsonPrefix(json, limit, 2).text)).toBe(true);
  }), { numRuns: 1000 });
});

test('long Telegram lines split, Slack replies fitted, transcripts and stored texts capped: whole characters', () => {
  const line = '🎉'.repeat(5000);
  const chunks = splitMessage(line, 4095);
  expect(chunks.join('')).toBe(line);
  for (const chunk of chunks) {
    expect(chunk.length).toBeLessThanOrEqual(4095);
    expect(wellFormed(chunk)).toBe(true);
  }
  expect(splitMessage('🎉🎉', 1).join('')).toBe('🎉🎉'); // a limit below one character still advances
  const fitted = fitReply(`a${'🎉'.repeat(30_000)}`, 40_000, '');
  expect(fitted.length).toBeLessThanOrEqual(40_000);
  expect(wellFormed(fitted)).toBe(true);
  expect(wellFormed(capText(`a${'🎉'.repeat(100)}`, 10))).toBe(true);
  const record = boundTexts({ ...eventRecord({ v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'custom', delivery_id: 'd', received_at: '2026-01-01T00:00:00.000Z' }, 'queued', '2026-01-01T00:00:00.000Z'), reply: `a${'🎉'.repeat(STORED_TEXT_CAP)}` });
  expect(wellFormed(record.reply as string)).toBe(true);
});
