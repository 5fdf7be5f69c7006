/**
 * Deliveries that landed but may not be in the event log yet: a target that answered while
 * the store could not be written (a full disk, a locked database) has nothing on record, so
 * the next attempt of the message would deliver it again; a chat post (Slack through an
 * incoming webhook, Telegram) has nothing a later attempt could find it by. Each outcome is
 * noted here, in this process, before its write, and merged into what earlier attempts
 * delivered when the message is tried again here; the note goes once a write of the targets
 * succeeds. A restart forgets it (the record's own writes are what survive a process).
 */
import type { EventRecord, TargetKind, TargetOutcome } from '../types';

type Targets = NonNullable<EventRecord['targets']>;

/** Entries kept at most (the oldest go first): enough for every message a store outage can hold up. */
const MAX_ENTRIES = 10_000;

export class UnrecordedDeliveries {
  private readonly entries = new Map<string, Targets>();

  private static key(eventId: string, subscription: string): string {
    return `${eventId}\u0000${subscription}`;
  }

  /** Notes a delivered target of (event, subscription), before its outcome is written. */
  note(eventId: string, subscription: string, kind: TargetKind | string, outcome: TargetOutcome): void {
    const key = UnrecordedDeliveries.key(eventId, subscription);
    const targets = { ...this.entries.get(key), [kind]: outcome };
    this.entries.delete(key);
    this.entries.set(key, targets);
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** What the record says was delivered, with what landed here without being written. */
  withNoted(eventId: string, subscription: string, recorded: EventRecord['targets']): EventRecord['targets'] {
    const noted = this.entries.get(UnrecordedDeliveries.key(eventId, subscription));
    return noted ? { ...recorded, ...noted } : recorded;
  }

  /** The targets are on record now. */
  forget(eventId: string, subscription: string): void {
    this.entries.delete(UnrecordedDeliveries.key(eventId, subscription));
  }
}
