/**
 * Validation of subscription fields (DESIGN §2.4), shared by every command that writes
 * one. Each problem is a Failure whose message says what to do.
 */
import type { Config } from '../config/types';
import { isCommentable } from '../delivery/commentable';
import { fail, ok, type Result } from '../errors';
import { splitSource } from '../events/filters';
import { GITHUB_EVENTS, GITHUB_UNROUTED_EVENT, GITLAB_EVENTS, eventOrigin as originOf } from '../events/known';
import { closest } from '../suggest';
import { actionsFor, checkAction, githubEventNames, type CodeHost } from './event-actions';
import { HookError } from '../errors';
import type { SkillSource } from '../skills/source';
import { checkTemplate } from '../templates/template';
import { TARGET_KINDS, missingTargetConfig } from '../delivery/targets';
import { SUBSCRIPTION_NAME_PATTERN, type TargetKind } from '../types';

/**
 * An event name, optionally `.action`; a custom event type may hold dots itself
 * (`deploy.finished.ok`: event `deploy.finished`, action `ok`), so any number of non-empty
 * dot-separated parts, within an event type's 100 characters plus a 100-character action.
 */
const EVENT_FILTER = /^(?:\*|[A-Za-z0-9][A-Za-z0-9_:/-]*(?:\.[A-Za-z0-9_:/-]+)*)$/;
const PART_MAX = 100;

/** Whether the filter can be read as an event type (≤ 100) alone, or one and an action (≤ 100) split at some dot. */
function fitsEventType(filter: string): boolean {
  if (filter.length <= PART_MAX) return true;
  for (let dot = filter.indexOf('.'); dot >= 0 && dot <= PART_MAX; dot = filter.indexOf('.', dot + 1)) {
    if (filter.length - dot - 1 <= PART_MAX) return true;
  }
  return false;
}

/** The origin of a filter, judged without its source qualifier (`github:push` → github). */
function eventOrigin(filter: string) {
  const { source, rest } = splitSource(filter);
  if (rest === '*') return 'both';
  if (source === 'custom') return 'unknown';
  return originOf(rest);
}

/** Names people reach for first, and the target that does it. */
const TARGET_HINTS: Record<string, TargetKind> = {
  slack: 'teamchat', chat: 'teamchat', telegram: 'messenger', github: 'codehost_comment', gitlab: 'codehost_comment',
  comment: 'codehost_comment', pr: 'codehost_comment', mr: 'codehost_comment',
};

function unknownEventWarning(filter: string): string {
  const [name = filter, action] = filter.split('.');
  const guess = closest(name, [...GITHUB_EVENTS, ...GITLAB_EVENTS], 2);
  const suggestion = guess ? ` Did you mean '${guess}${action ? `.${action}` : ''}'?` : '';
  return `'${filter}' is not a GitHub or GitLab event name; it can still match custom senders (X-Event-Type or the payload's event_type/type/event).${suggestion}`;
}

export function validateName(name: string): Result<string> {
  if (SUBSCRIPTION_NAME_PATTERN.test(name)) return ok(name);
  const shown = JSON.stringify(name).slice(0, 80);
  return fail({ code: 'name_invalid', message: `Invalid subscription name ${shown}: use 1-63 lower-case letters, digits, '-' and '_', starting with a letter or digit` });
}

/** Whether a code host sends events of this name (GitHub: known.ts or @octokit/webhooks' newer names). */
function hostSends(host: CodeHost, name: string): boolean {
  const origin = originOf(name);
  return origin === 'both' || origin === host || (host === 'github' && actionsFor('github', name) !== undefined);
}

/** `pull_requests` on github: → "Did you mean 'github:pull_request'?" */
function unsentEventWarning(source: CodeHost, name: string, event: string): string {
  const names = source === 'github' ? [...GITHUB_EVENTS, ...githubEventNames()] : GITLAB_EVENTS;
  const guess = closest(name, names, 2);
  return `'${name}' is not an event ${source === 'github' ? 'GitHub' : 'GitLab'} sends; '${event}' may never match${guess ? `. Did you mean '${event.replace(`:${name}`, `:${guess}`)}'?` : ''}`;
}

/**
 * GitHub's ping never reaches a subscription (known.ts): `github:ping` would never fire and is
 * refused, as an action a host never sends is; an unqualified `ping` can still match a custom
 * sender's ping, so it is a warning. (`gitlab:ping` is an event GitLab does not send: warned below.)
 */
function unroutedPing(event: string, source: 'github' | undefined): { error: string } | { warning: string } {
  const custom = `'${event.replace(/^(github:)?ping/, 'custom:ping')}'`;
  if (source === 'github') return { error: `'${event}' would never fire: GitHub's ping is answered 200 ok before routing and reaches no subscription; remove it from --events (a custom sender's ping is ${custom})` };
  return { warning: `'${event}' never matches GitHub's ping (answered 200 ok before routing); it can match a custom sender's ping: write it ${custom}` };
}

/**
 * Syntax errors, actions a host never sends for the event and `github:ping` are refused; unknown names
 * are warnings (custom senders; events newer than the lists). `actions: false` checks
 * syntax and names only (for stored filters an update does not change).
 */
export function validateEvents(events: string[], options: { actions?: boolean } = {}): Result<{ events: string[]; warnings: string[] }> {
  const warnings: string[] = [];
  for (const event of events) {
    const { source, rest } = splitSource(event);
    if (!EVENT_FILTER.test(rest) || !fitsEventType(rest)) {
      return fail({ code: 'event_invalid', message: `Invalid event filter ${JSON.stringify(event).slice(0, 80)}: write an event name such as pull_request, name.action such as pull_request.opened, a source-qualified one such as github:push or gitlab:merge_request.open, or *` });
    }
    if (rest === '*' || source === 'custom') continue;
    // A code host's event names hold no dot: its action is everything after the first.
    const dot = rest.indexOf('.');
    const [name, action] = dot < 0 ? [rest, undefined] : [rest.slice(0, dot), rest.slice(dot + 1)];
    if (name === GITHUB_UNROUTED_EVENT && source !== 'gitlab' && options.actions !== false) {
      const ping = unroutedPing(event, source);
      if ('error' in ping) return fail({ code: 'event_invalid', message: ping.error });
      warnings.push(ping.warning);
      continue;
    }
    const hosts = (source ? [source] : (['github', 'gitlab'] as const)).filter((host) => hostSends(host, name));
    if (source && hosts.length === 0) warnings.push(unsentEventWarning(source, name, event));
    else if (!source && hosts.length === 0) warnings.push(unknownEventWarning(event));
    if (action === undefined || options.actions === false) continue;
    const verdict = checkAction(source, name, action, hosts);
    if (verdict?.error) return fail({ code: 'event_invalid', message: verdict.error });
    if (verdict?.warning) warnings.push(verdict.warning);
  }
  return ok({ events: [...new Set(events)], warnings });
}

/**
 * The prompt's placeholders, or why it is refused. `given: false` is for a prompt already
 * stored that this command does not change: only its syntax is checked, so one stored before
 * the path check (hunt 12 D4) does not block an `update` of other fields.
 */
export function validatePrompt(prompt: string, given = true): Result<string[]> {
  const checked = checkTemplate(prompt, { paths: given });
  if (!checked.ok) return fail({ code: 'template_invalid', message: `Invalid prompt template: ${checked.error.message}` });
  return ok(checked.placeholders);
}

export function validateSkills(skills: string[], library: SkillSource): Result<string[]> {
  for (const name of skills) {
    try {
      library.load(name);
    } catch (error) {
      const message = error instanceof HookError ? error.message : String(error);
      return fail({ code: 'skill_not_found', message: error instanceof HookError && error.code === 'skill_invalid' ? message : `Unknown skill '${name}'; available: ${library.names().join(', ')}` });
    }
  }
  return ok([...new Set(skills)]);
}

export function validateTargets(targets: string[], events: string[], config: Config): Result<TargetKind[]> {
  const known = new Set<string>(TARGET_KINDS);
  for (const target of targets) {
    if (!known.has(target)) {
      const hint = TARGET_HINTS[target.toLowerCase()] ?? closest(target, TARGET_KINDS, 4);
      return fail({ code: 'target_invalid', message: `Unknown delivery target '${target}'${hint ? ` (did you mean '${hint}'?)` : ''}; known targets: ${TARGET_KINDS.join(', ')}` });
    }
    const key = missingTargetConfig(target as TargetKind, config, events);
    if (key) return fail({ code: 'target_unconfigured', message: `Delivery target '${target}' needs the config section ${key} in config.yaml` });
  }
  if (targets.includes('codehost_comment')) {
    const refused = events.length === 0 ? ['(every event)'] : events.filter((e) => !isCommentable(splitSource(e).rest) && eventOrigin(e) !== 'unknown');
    if (refused.length > 0) {
      return fail({
        code: 'target_invalid',
        message: `codehost_comment cannot answer ${refused.join(', ')}: those events name no pull/merge request, issue or commit; narrow --events or use another target`,
      });
    }
  }
  return ok([...new Set(targets)] as TargetKind[]);
}

/** `--comment-mode`: how `codehost_comment` answers (issue 18). */
export function validateCommentMode(mode: string): Result<'sticky' | 'new'> {
  if (mode === 'sticky' || mode === 'new') return ok(mode);
  return fail({ code: 'comment_mode_invalid', message: `--comment-mode must be sticky or new, not '${mode.replace(/[^\x20-\x7e]/g, '?').slice(0, 40)}'` });
}
