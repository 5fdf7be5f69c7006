/**
 * `hookagent webhook dead-letters [--json]` and `hookagent webhook redrive [<event-id>…]`:
 * what the dead-letter queue holds, and moving it back to the event queue (on AWS, SQS;
 * locally the dead-letter table can be listed, redriving it comes with the local store's
 * implementation of the DeadLetterQueue port).
 */
import { HookError } from '../../functions/core/errors';
import { describeError } from '../../functions/core/errors';
import { describeBody, redriveDeadLetters, settleDeadLetters, type DeadLetterListing, type DeadLetterQueue } from '../../functions/core/operations/dead-letters';
import { awsDeployment, withStores, type CliContext, type GlobalOptions, type Stores } from '../context';
import { asInvoked } from '../invocation';
import { table } from '../output';
import { deadLetterQueueName, queueName, queueUrl } from './deployment';

const EVENT_ID = /^evt_[0-9a-z_]{1,60}$/;

/** The stores' dead-letter queue: SQS on AWS; locally whatever the local queue offers. */
interface OpenedDeadLetters {
  queue: DeadLetterQueue | undefined;
  /** The letters, and whether they are all of them (SQS lists the first 1,000). */
  list: () => Promise<DeadLetterListing>;
  /**
   * The queue's redrive count as deployed (SQS: the event queue's RedrivePolicy, 5 when it
   * cannot be read), where a letter's own count is not the one it was moved at.
   */
  receiveCount?: () => Promise<number>;
  /** How many letters one listing reads at most (SQS), for the note when it stopped there. */
  listCap?: number;
  close(): void;
}

async function openDeadLetters(ctx: CliContext, options: GlobalOptions, stores: Stores): Promise<OpenedDeadLetters> {
  const deployment = awsDeployment(ctx.config, options);
  if (deployment) {
    // The SDK loads for a deployment only (see cli/aws-stores.ts).
    const [{ SQSClient }, { MAX_MESSAGES, SqsDeadLetterQueue }] = await Promise.all([import('@aws-sdk/client-sqs'), import('../../functions/aws/sqs-dead-letter-queue')]);
    const sqs = new SQSClient(deployment.region ? { region: deployment.region } : {});
    try {
      const queue = new SqsDeadLetterQueue(sqs, await queueUrl(sqs, deadLetterQueueName(deployment.stage)), await queueUrl(sqs, queueName(deployment.stage)));
      return { queue, list: () => queue.listing(), receiveCount: () => queue.redriveCount(), listCap: MAX_MESSAGES, close: () => sqs.destroy() };
    } catch (error) {
      sqs.destroy();
      throw error;
    }
  }
  const port = (stores as Stores & { deadLetters?: DeadLetterQueue }).deadLetters;
  if (port) return { queue: port, list: async () => ({ letters: await port.list() }), close() {} };
  const local = stores.queue as Partial<{ deadLetters(): Promise<Array<{ messageId: string; body: string; receiveCount: number; deadAt: number }>> }>;
  if (typeof local.deadLetters !== 'function') throw new HookError('unsupported', 'This store keeps no dead letters');
  const read = local.deadLetters.bind(local);
  return {
    queue: undefined,
    list: async () => ({
      letters: (await read().catch((error: unknown) => {
        // A store made a moment ago: its dead-letter table is still being created, so it holds none.
        if (error instanceof Error && /ResourceNotFoundException/.test(error.message)) return [];
        throw error;
      })).map((d) => ({
        id: d.messageId, ...describeBody(d.body), reason: `gave up after ${d.receiveCount} receive(s)`, receive_count: d.receiveCount,
        ...(d.deadAt ? { dead_at: new Date(d.deadAt).toISOString() } : {}), body: d.body,
      })),
    }),
    close() {},
  };
}

/** A listing that stopped at SQS's cap: how many of about how many, and that redrive is not capped. */
function capNote(shown: number, approximateTotal: number | undefined, listCap: number | undefined): string {
  const total = approximateTotal === undefined ? 'more' : `~${approximateTotal}`;
  return asInvoked(`note: showing the first ${shown} dead letters of ${total} in the queue (SQS lists at most ${listCap ?? shown} at once; oldest first among these only). 'hookagent webhook redrive' moves them all.`);
}

export async function listDeadLetters(ctx: CliContext, options: GlobalOptions, json: boolean): Promise<void> {
  await withStores(ctx, async (stores) => {
    const dead = await openDeadLetters(ctx, options, stores);
    try {
      const { letters, truncated } = await dead.list();
      // Records SQS's redrive left `processing` (nothing of ours saw their last receive) end failed now.
      // With the deployed receive limit (read for the listing already; never fails, falls back to 5).
      const receiveCount = await dead.receiveCount?.();
      await settleDeadLetters(stores.events, letters, receiveCount ? { receiveCount } : {})
        .catch((error: unknown) => ctx.warn(`note: could not mark the event records of these dead letters failed (${describeError(error)})`));
      // Stdout keeps its shape (an array of letters); that it is not all of them goes to stderr.
      const cap = truncated ? capNote(letters.length, truncated.approximateTotal, dead.listCap) : undefined;
      if (json) {
        ctx.out(JSON.stringify(letters.map(({ body: _body, ...rest }) => rest), null, 2));
        if (cap) ctx.warn(cap);
        return;
      }
      if (letters.length === 0) return ctx.out(`No dead letters in ${stores.where}.`);
      // A table like the other lists (tab-separated when piped); the hint goes to stderr. A letter
      // SQS's redrive moved has no known dead-lettering time: DEAD AT shows when it was first queued.
      ctx.out(table(['DEAD AT', 'EVENT ID', 'SUBSCRIPTION', 'RECEIVES', 'REASON'], letters.map((l) => [
        l.dead_at ?? (l.queued_at ? `queued ${l.queued_at}` : '-'), l.event_id ?? `(malformed message ${l.id})`, l.subscription ?? '-', String(l.receive_count), l.reason,
      ])));
      ctx.warn(cap ?? asInvoked(`${letters.length} dead letter(s). 'hookagent webhook redrive' moves them back to the queue (all, or by event id).`));
    } finally {
      dead.close();
    }
  });
}

export async function redrive(ctx: CliContext, options: GlobalOptions, eventIds: string[]): Promise<void> {
  const bad = eventIds.filter((id) => !EVENT_ID.test(id));
  if (bad.length > 0) throw new HookError('invalid_event_id', `Not an event id: ${bad.join(', ')} (they look like evt_0mws0mwck916a3c297ed36480)`);
  await withStores(ctx, async (stores) => {
    const dead = await openDeadLetters(ctx, options, stores);
    try {
      if (!dead.queue) {
        throw new HookError('unsupported', "This store's dead letters can be listed but not redriven; 'hookagent webhook replay <event-id>' queues an event again.");
      }
      const result = await redriveDeadLetters(dead.queue, stores.events, eventIds);
      for (const l of result.moved) ctx.out(`Redrove ${l.event_id} for '${l.subscription}'.`);
      if (result.moved.length === 0 && eventIds.length === 0) ctx.out('No dead letters to redrive.');
      if (result.notFound.length > 0) throw new HookError('event_not_found', `Not in the dead-letter queue: ${result.notFound.join(', ')}${result.moved.length > 0 ? ` (${result.moved.length} other(s) redriven)` : ''}`);
    } finally {
      dead.close();
    }
  });
}
