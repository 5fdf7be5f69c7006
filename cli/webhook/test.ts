/** `webhook test`: renders a subscription's prompt against a payload, locally, no network. */
import { existsSync } from 'node:fs';
import { PAYLOAD_FILE_LIMIT, readFileBounded } from '../../functions/core/bounded-read';
import { HookError } from '../../functions/core/errors';
import { parsePayload } from '../../functions/core/ingest/payload-body';
import { escapeTerminal } from '../../functions/core/log';
import { placeholderAdvice, renderPrompt } from '../../functions/core/templates/template';
import { eventFilterReport, filterReport, loopGuardReport } from './filter-report';
import { splitSource } from '../../functions/core/events/filters';
import { withStores, type CliContext } from '../context';
import { sampleFor } from '../samples';
import { previewEvent, previewType, type PreviewEvent } from './preview-event';
import { sampleChoice } from './sample-event';

export function readPayload(value: string): Record<string, unknown> {
  const looksInline = value.trim().startsWith('{') || value.trim().startsWith('[');
  let text: string;
  // `-`: standard input (`gh api … | hookagent webhook test x --payload -`), bounded as a file is.
  if (value === '-') text = readFileBounded(0, PAYLOAD_FILE_LIMIT, '--payload -');
  else if (!looksInline && existsSync(value)) text = readFileBounded(value, PAYLOAD_FILE_LIMIT, '--payload');
  else if (looksInline) text = value;
  else throw new HookError('payload_invalid', `--payload: no file '${value}', and it is not inline JSON`);
  // Read as the service reads a request's bytes (ingest/payload-body.ts): a leading byte order mark dropped, an object required.
  const bytes = Buffer.from(text, 'utf8');
  const parsed = parsePayload(bytes, undefined);
  if ('payload' in parsed) return parsed.payload as Record<string, unknown>;
  if (parsed.error !== 'malformed JSON') throw new HookError('payload_invalid', `--payload is ${parsed.error}`);
  throw new HookError('payload_invalid', `--payload is not valid JSON: ${visible(jsonError(utf8.decode(bytes)))}`);
}

/** The UTF-8 decoder, which drops a leading byte order mark as the service's does: the text it parsed. */
const utf8 = new TextDecoder('utf-8');

/** Why JSON.parse refuses `text` (its position and a window of the text). */
function jsonError(text: string): string {
  try {
    JSON.parse(text);
    return 'malformed JSON';
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** `text` with every invisible character (no-break and zero-width spaces, controls, marks) named by code point: `<U+00A0>`. */
function visible(text: string): string {
  return text.replace(/[\s\p{Z}\p{C}]/gu, (c) => (c === ' ' ? c : `<U+${(c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}>`));
}

export async function test(ctx: CliContext, name: string, payloadOption: string | undefined, event: string | undefined): Promise<void> {
  const subscription = await withStores(ctx, (stores) => stores.subscriptions.get(name));
  if (!subscription) throw new HookError('subscription_not_found', `No subscription named '${name}'`);
  let payload: Record<string, unknown>;
  let preview: PreviewEvent;
  if (payloadOption !== undefined) {
    payload = readPayload(payloadOption);
    preview = previewEvent(subscription, payload, event);
  } else {
    // A realistic sample of the subscription's first event, as --send uses.
    // `github:*` alone names no event: the sample `--send` takes (sample-event.ts), a pull request.
    const filter = event ?? (subscription.events.length > 0 ? sampleChoice(subscription.events).filter : undefined);
    const sample = filter === undefined ? undefined : sampleFor(filter);
    payload = sample?.payload ?? {};
    // No sample: rendered against {} as the filter's own event (what `--send`'s stub names), not as the `custom` event {} would be.
    preview = sample ? { source: sample.source, event: sample.event, ...(sample.action ? { action: sample.action } : {}) } : previewEvent(subscription, payload, filter);
    ctx.warn(sample ? `(rendered against a sample ${sample.source} '${previewType(preview)}' payload; pass --payload for your own)` : '(no sample payload ships for this event: rendered against {}; pass --payload)');
  }
  const type = previewType(preview);
  const rendered = renderPrompt(subscription.prompt, payload, type);
  // Payload text may hold terminal escape sequences: shown, never acted on.
  ctx.out(escapeTerminal(rendered.text));
  // A path written so that it never resolves (a template stored before subscribe checked it) says what to write.
  const unresolved = rendered.missing.map((path) => {
    const advice = placeholderAdvice(path);
    return advice ? `{${path}} (${advice})` : `{${path}}`;
  });
  if (unresolved.length > 0) ctx.out(`\nUnresolved placeholders (left as written): ${unresolved.join(', ')}`);
  const routing = eventFilterReport(subscription.events, preview);
  if (routing) ctx.out(routing);
  const ignored = loopGuardReport(payload);
  if (ignored) ctx.out(ignored);
  else if (subscription.filters?.length) ctx.out(filterReport(subscription.filters, payload));
}
