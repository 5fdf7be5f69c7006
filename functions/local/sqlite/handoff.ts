/**
 * Messages handed from ingest to serve's worker in the same process (issue 16): ingest has
 * just parsed the payload and built the message, so the worker's first receive takes that
 * object instead of reading the 21 KB text back from SQLite and parsing it again. Only a
 * shortcut: what it does not hold (evicted, another process, a redelivery) is read from
 * the store as before. Bounded by the characters of the messages' text. The consumer takes
 * the oldest messages first, so when full it keeps what it holds and refuses new ones
 * (evicting the oldest would drop exactly the next ones wanted whenever the worker is
 * behind by more than the bound); only entries left unclaimed for a minute make room.
 */
import { messageJson } from '../../core/message-json';
import type { QueueMessage } from '../../core/types';

/** About 100 webhook-sized (21 KB) messages (their parsed payloads stay in memory meanwhile): a worker that keeps up holds a few dozen. */
export const HANDOFF_MAX_CHARS = 2 * 1024 * 1024;
/** An entry not taken within this long is for a consumer that is not coming (another process received it). */
export const HANDOFF_STALE_MS = 60_000;

export class MessageHandoff {
  private readonly held = new Map<string, { message: QueueMessage; chars: number; at: number }>();
  private chars = 0;

  constructor(private readonly maxChars = HANDOFF_MAX_CHARS) {}

  /** Holds `message` for the consumer, unless full; `now` in ms. */
  put(key: string, message: QueueMessage, now: number): void {
    this.take(key);
    const chars = messageJson(message).length;
    if (this.chars + chars > this.maxChars) {
      for (const [oldest, entry] of this.held) {
        if (now - entry.at < HANDOFF_STALE_MS) break;
        this.held.delete(oldest);
        this.chars -= entry.chars;
      }
      if (this.chars + chars > this.maxChars) return;
    }
    this.held.set(key, { message, chars, at: now });
    this.chars += chars;
  }

  /** The message handed over under `key`, at most once. */
  take(key: string): QueueMessage | undefined {
    const entry = this.held.get(key);
    if (!entry) return undefined;
    this.held.delete(key);
    this.chars -= entry.chars;
    return entry.message;
  }

  get size(): number {
    return this.held.size;
  }
}
