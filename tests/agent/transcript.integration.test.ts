/** Transcripts: small ones stay in the event record, large ones go to the payload store; results and inputs are capped. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { RunRecorder, TRANSCRIPT_TEXT_CAP } from '../../functions/core/agent/run-record';
import { INLINE_TRANSCRIPT_CAP, loadTranscript, storeTranscript } from '../../functions/core/agent/transcript-store';
import { FilePayloadStore } from '../../functions/local/file-payload-store';

const payloads = () => new FilePayloadStore(mkdtempSync(join(tmpdir(), 'hookagent-transcript-')));

test('a small transcript is kept inline; a large one in the payload store, read back the same', async () => {
  const store = payloads();
  const small = new RunRecorder('openai', 'gpt-test', 'SYSTEM', '<untrusted-event-data>\nhi\n</untrusted-event-data>');
  small.turn('done', 'end', { input: 10, output: 2 });
  const inline = await storeTranscript(store, 'evt_1', 'sub', small.snapshot('done').transcript);
  expect(inline.startsWith('{')).toBe(true);
  expect(await loadTranscript(store, inline)).toEqual({
    v: 1, provider: 'openai', model: 'gpt-test', system_sha256: createHash('sha256').update('SYSTEM').digest('hex'),
    user: '<untrusted-event-data>\nhi\n</untrusted-event-data>', steps: [{ step: 1, text: 'done', stop: 'end', tool_calls: [] }], reply: 'done',
  });

  const large = new RunRecorder('anthropic', 'claude-test', 'SYSTEM', 'prompt');
  const step = large.turn('looking', 'tool_use', { input: 1, output: 1 });
  large.toolCall(step, 'http_get', { url: 'https://p/api/v1/query?query=up' }, true, 12, 'y'.repeat(30_000));
  large.toolCall(step, 'http_get', { query: 'q'.repeat(10_000) }, false, 3, 'refused');
  const run = large.snapshot('answer');
  expect(run.usage.tool_calls).toEqual([{ name: 'http_get', ms: 12, bytes: 30_000, ok: true }, { name: 'http_get', ms: 3, bytes: 7, ok: false }]);
  const ref = await storeTranscript(store, 'evt_2', 'sub', run.transcript);
  expect(JSON.stringify(run.transcript).length).toBeGreaterThan(INLINE_TRANSCRIPT_CAP);
  expect(ref).toMatch(/^file:\/\/.*transcript_evt_2_sub_r1\.json$/);
  const loaded = await loadTranscript(store, ref);
  expect(loaded?.steps[0]?.tool_calls[0]?.result.length).toBeLessThan(TRANSCRIPT_TEXT_CAP + 100);
  expect(loaded?.steps[0]?.tool_calls[1]?.input).toEqual({ truncated_input: expect.stringContaining('truncated') });
  expect(await loadTranscript(store, undefined)).toBeUndefined();
});
