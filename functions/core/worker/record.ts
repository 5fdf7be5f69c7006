/**
 * The event record of one (event, subscription) as the worker moves it along: one builder
 * for new records, and a writer that applies each transition, stamps `updated_at` and
 * keeps the stored item within the store's size limit. DynamoDB refuses items over 400 KB
 * (counted in UTF-8 bytes), which once left such events `processing` for ever: the stored
 * prompt and reply are cut with a note, and an inline payload that alone is too large
 * moves to the PayloadStore.
 */
import type { EventLog, PayloadStore, UpdateOptions } from '../ports';
import type { EventRecord, EventStatus, QueueMessage } from '../types';
import { HookError } from '../errors';
import { messageJson } from '../message-json';
import { cutText } from '../cut-text';

/**
 * What an EventLog update with `existing` throws when the record is gone (ingest withdrew it
 * after a queue send that failed): the worker's attempt stops there, before delivering.
 */
export class RecordGone extends HookError {
  constructor(eventId: string, subscription: string) {
    super('event_not_found', `The event record of ${eventId} for '${subscription}' is gone`);
  }
}

/** What the event log keeps of a prompt or a reply, in characters, before the byte budget. */
export const STORED_TEXT_CAP = 64 * 1024;
/** The largest stored record, in UTF-8 bytes of its JSON: under DynamoDB's 400 KB with room for attribute names and index keys. */
export const RECORD_BYTE_LIMIT = 350 * 1024;
/** Prompt and reply together never take more than this, in bytes. */
const TEXT_BYTE_BUDGET = 160 * 1024;

/** A record for a message: the one place records are built from messages (ingest, release, replay, worker). */
export function eventRecord(message: QueueMessage, status: EventStatus, at: string): EventRecord {
  return {
    event_id: message.event_id, subscription: message.subscription, status, source: message.source, event: message.event,
    ...(message.action ? { action: message.action } : {}), delivery_id: message.delivery_id, received_at: message.received_at,
    updated_at: at, message, attempts: 0,
  };
}

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** `text` cut to at most `limit` UTF-8 bytes (never inside a character), with a note of what was cut. */
export function cutToBytes(text: string, limit: number): string {
  const size = bytes(text);
  if (size <= limit) return text;
  const note = (cut: number) => `\n…[cut: ${cut} more bytes not stored]`;
  const keep = Math.max(0, limit - bytes(note(size)));
  // Decoding a byte prefix drops a partial last character as U+FFFD; strip that.
  const head = Buffer.from(text, 'utf8').subarray(0, keep).toString('utf8').replace(/\uFFFD$/, '');
  return `${head}${note(size - bytes(head))}`;
}

const TRUNCATED = '…[truncated]';

/** Idempotent: a text cut before (a record saved again) is kept as it is. */
function capChars(text: string): string {
  if (text.length <= STORED_TEXT_CAP || (text.length <= STORED_TEXT_CAP + TRUNCATED.length && text.endsWith(TRUNCATED))) return text;
  return `${cutText(text, STORED_TEXT_CAP)}${TRUNCATED}`;
}

/** UTF-8 bytes of each message's JSON, measured once: a message (with its payload) never changes. */
const messageBytes = new WeakMap<QueueMessage, number>();

/** Records the size of a message read from a queue body (the body is its JSON). */
export function noteMessageBytes(message: QueueMessage, body: string): void {
  messageBytes.set(message, bytes(body));
}

function sizeOfMessage(message: QueueMessage): number {
  let size = messageBytes.get(message);
  if (size === undefined) {
    // A message read back from a store has its text remembered: measured, not re-serialised.
    size = bytes(messageJson(message));
    messageBytes.set(message, size);
  }
  return size;
}

/** The stored size of a record, in UTF-8 bytes of its JSON (close to DynamoDB's own count). */
export function recordBytes(record: EventRecord): number {
  const { message, ...rest } = record;
  return bytes(JSON.stringify(rest)) + sizeOfMessage(message) + ',"message":'.length;
}

/**
 * Whether the record surely fits `RECORD_BYTE_LIMIT` without serialising it: its strings
 * counted at 6 bytes a character (the most JSON escaping takes), the rest measured. The
 * worker saves a record several times per event; its prompt and reply are large strings.
 */
function surelyFits(record: EventRecord): boolean {
  let bound = sizeOfMessage(record.message) + 16;
  for (const key in record) {
    if (key === 'message') continue;
    const value = (record as unknown as Record<string, unknown>)[key];
    bound += key.length + 4 + (typeof value === 'string' ? value.length * 6 : bytes(JSON.stringify(value) ?? ''));
    if (bound > RECORD_BYTE_LIMIT) return false;
  }
  return true;
}

const fits = (record: EventRecord) => surelyFits(record) || recordBytes(record) <= RECORD_BYTE_LIMIT;

/** Cuts prompt and reply so the record fits `RECORD_BYTE_LIMIT` (half the text budget each, the reply first kept). */
export function boundTexts(record: EventRecord): EventRecord {
  let next = record;
  if (next.prompt !== undefined && next.prompt.length > STORED_TEXT_CAP) next = { ...next, prompt: capChars(next.prompt) };
  if (next.reply !== undefined && next.reply.length > STORED_TEXT_CAP) next = { ...next, reply: capChars(next.reply) };
  if (fits(next)) return next;
  const half = TEXT_BYTE_BUDGET / 2;
  if (next.prompt !== undefined) next = { ...next, prompt: cutToBytes(next.prompt, half) };
  if (next.reply !== undefined) next = { ...next, reply: cutToBytes(next.reply, half) };
  const over = recordBytes(next) - RECORD_BYTE_LIMIT;
  if (over > 0 && next.prompt !== undefined) next = { ...next, prompt: cutToBytes(next.prompt, Math.max(0, bytes(next.prompt) - over)) };
  return next;
}

/**
 * Applies transitions to one record and writes each, bounded. A staged transition is
 * applied to `current` at once and written with the next save: one write where two
 * follow each other with nothing in between that others need to see. The first write to
 * a record read from the event log is conditional on it still being there (RecordGone):
 * either ingest withdraws an unstarted record or the worker moves it on, never both. A
 * save that failed leaves its changes unsaved, so saving again writes them.
 */
export class RecordWriter {
  /** The record as the event log has it (when `stored`). */
  private saved: EventRecord;
  /** The whole reply last written to the PayloadStore (it is written once). */
  private replyKept: string | undefined;

  constructor(
    public current: EventRecord,
    private readonly events: EventLog,
    private readonly payloads: PayloadStore,
    private readonly now: () => string,
    /** Whether the record is in the event log already: then a transition writes only what changed. */
    private stored = false,
  ) {
    this.saved = current;
    this.unclaimed = stored;
  }

  /** Read from the event log and not written since: the next write must find it there. */
  private unclaimed: boolean;

  /** Whether staged changes wait for a save. */
  get unsaved(): boolean {
    return this.current !== this.saved;
  }

  /** Applies `changes` now and writes them with the next `save`. */
  stage(changes: Partial<EventRecord>): void {
    this.current = { ...this.current, ...changes };
  }

  /** `options.immediately`: see EventLog's UpdateOptions (a first write is durable anyway). */
  async save(changes: Partial<EventRecord> = {}, options: UpdateOptions = {}): Promise<EventRecord> {
    let next = boundTexts({ ...this.current, ...changes, updated_at: this.now() });
    if (changes.reply !== undefined && next.reply !== changes.reply && changes.reply !== this.replyKept) {
      // The record keeps a cut reply; the PayloadStore keeps it whole, for a retry that delivers it again.
      const pointer = await this.payloads.put(`${next.event_id}-${next.subscription}-reply`, changes.reply);
      this.replyKept = changes.reply;
      next = { ...next, reply_ref: pointer };
    }
    if (!fits(next) && next.message.payload !== undefined) {
      // The inline payload alone is too large for the record: keep it in the PayloadStore instead.
      const { payload, ...message } = next.message;
      const pointer = await this.payloads.put(`${next.event_id}-${next.subscription}`, JSON.stringify(payload));
      next = { ...next, message: { ...message, payload_ref: pointer } };
    }
    if (!fits(next)) {
      // Whatever is left over (e.g. a huge warning list): keep the essentials and say why.
      next = { ...next, warnings: [...(next.warnings ?? []).slice(0, 20), 'record cut to fit the event log'].map((w) => cutToBytes(w, 2048)) };
    }
    const previous = this.saved;
    this.current = next;
    if (this.stored) {
      // A status change is a small update: the payload and message are not written again.
      const changed: Partial<EventRecord> = { updated_at: next.updated_at };
      for (const key of Object.keys(next) as Array<keyof EventRecord>) {
        if (key !== 'message' && next[key] !== previous[key]) (changed as Record<string, unknown>)[key] = next[key];
      }
      for (const key of Object.keys(previous) as Array<keyof EventRecord>) {
        if (next[key] === undefined) (changed as Record<string, unknown>)[key] = undefined;
      }
      // The message moved its payload out: the whole record follows, once this write has found it.
      if (this.unclaimed || next.message === previous.message) {
        await this.events.update(next.event_id, next.subscription, changed, { ...options, ...(this.unclaimed ? { existing: true } : {}) });
        this.unclaimed = false;
      }
    }
    if (!this.stored || next.message !== previous.message) {
      // First write, or the message moved its payload out: the whole record.
      await this.events.putAll([next]);
      this.stored = true;
    }
    this.saved = next;
    return next;
  }
}
