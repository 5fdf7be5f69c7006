/**
 * What `webhook test --dry-run` shows of a reply: what each subscribed target would be given.
 * Chat and log targets get the findings as a list (targets.ts, flattenFindings); a code host
 * places them on diff lines, so its comment shows the text, a line naming the inline findings
 * and the unread-diff note (codehost-comment.ts; which lines take a finding is known only
 * when it posts).
 */
import { flattenFindings, unreadNote, type ReplyParts } from '../../functions/core/delivery/findings';
import type { Subscription } from '../../functions/core/types';

export interface ReplyPreview {
  /** The targets that would be given `text`, in the subscription's order. */
  targets: string[];
  text: string;
}

/** "Reply (would be posted to …):" and the text, per preview. */
export function replyPreviewLines(parts: ReplyParts, subscription: Pick<Subscription, 'deliver'>): string[] {
  return replyPreviews(parts, subscription).flatMap((p, i) => [...(i > 0 ? [''] : []), `Reply (would be posted to ${p.targets.join(', ')}):`, p.text]);
}

export function replyPreviews(parts: ReplyParts, subscription: Pick<Subscription, 'deliver'>): ReplyPreview[] {
  const kinds = subscription.deliver.length > 0 ? subscription.deliver : ['log'];
  const listing = kinds.filter((kind) => kind !== 'codehost_comment');
  const previews: ReplyPreview[] = [];
  // Each target where the subscription names it; the listing ones share one preview.
  for (const kind of kinds) {
    if (kind === 'codehost_comment') previews.push({ targets: [kind], text: codehostText(parts) });
    else if (kind === listing[0]) previews.push({ targets: listing, text: flattenFindings(parts) });
  }
  return previews;
}

function codehostText({ text, findings, unread }: ReplyParts): string {
  const places = findings.map((f) => `${f.path}:${f.line}${f.side === 'LEFT' ? ' (removed)' : ''}`);
  const inline = findings.length > 0 ? `\n\n${findings.length} inline finding(s): ${places.join(', ')}` : '';
  return `${text}${inline}${unread ? `\n\n${unreadNote(unread)}` : ''}`;
}
