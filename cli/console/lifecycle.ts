/**
 * Pause, resume and replay from the console run the same use-case code as
 * `hookagent webhook pause|resume|replay`. This is the one place that names that code:
 * when it moves (to functions/core/subscriptions/lifecycle.ts), only `runUseCase` changes.
 */
import type { CliContext, Stores } from '../context';
import { pause, replay, resume } from '../webhook/state';
import type { ConsoleSources } from './data';

export type LifecycleAction =
  | { kind: 'pause'; name: string }
  | { kind: 'resume'; name: string; discardHeld?: boolean }
  | { kind: 'replay'; eventId: string; subscription?: string };

/**
 * The CLI's stores from the console's: every member they share, so none the CLI use cases
 * read is left out (the payload store was, and a resume ran held events its filters no
 * longer take: hunt 8 D2). Closing stays with whoever opened them.
 */
export function useCaseStores(sources: ConsoleSources): Stores {
  const { publicUrl: _publicUrl, secretValues: _secretValues, ...shared } = sources;
  return { ...shared, close: async () => {} };
}

/** Runs one action against the console's stores; returns the lines the CLI would print. */
export async function runUseCase(sources: ConsoleSources, action: LifecycleAction): Promise<string[]> {
  const lines: string[] = [];
  const stores = useCaseStores(sources);
  // The CLI use cases need only these two members of the context.
  const ctx = { out: (text: string) => lines.push(text), warn: (text: string) => lines.push(text), openStores: async () => stores } as unknown as CliContext;
  if (action.kind === 'pause') await pause(ctx, action.name);
  else if (action.kind === 'resume') await resume(ctx, action.name, action.discardHeld ?? false);
  else await replay(ctx, action.eventId, action.subscription);
  return lines;
}
