/**
 * What hookagent writes after a chat post's reply (the **Findings** list, the unread-diff
 * note), kept apart from the reply: Slack and Telegram format and cut the reply on its own and
 * append these after it, so a code block the reply leaves open cannot swallow them and a cut
 * at the target's limit cannot drop them (as fitReply keeps a code-host comment's suffix).
 */
import { listedAdditions, type ReplyAdditions } from './findings';

/**
 * The additions as `render` shows them (from Markdown, blocks joined by a blank line), with
 * as many findings as `fits` accepts, the rest counted in the list's last line: thirty
 * findings of 2,000 characters would otherwise leave no room for the reply. The unread note
 * is always kept (its reason is capped at 500 characters).
 */
export function fitAdditions<T>(additions: ReplyAdditions, render: (markdown: string) => T, fits: (shown: T) => boolean): T {
  for (let shown = additions.findings.length; ; shown -= 1) {
    const out = render(listedAdditions(additions, shown).join('\n\n'));
    if (shown === 0 || fits(out)) return out;
  }
}
