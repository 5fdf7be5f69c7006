/**
 * `hookagent status [--json]` without an AWS deployment: the local service at a glance
 * (DESIGN §2.5). Is serve running on this config dir's data, does its /health answer, does
 * it run the current configuration, what waits in the queue, what is dead-lettered or
 * held, which `${VAR}` references have no value, whether config.yaml validates (serve keeps
 * the configuration it loaded when it does not) and whether the config dir is the owner's
 * alone. Exit code 3 when something needs attention, as for a deployment. A store file
 * removed or replaced under a running serve is said, and not opened (that would create a
 * new, empty one): its figures are then null.
 */
import { HookError } from '../../functions/core/errors';
import { storeReplacedUnderServe } from '../../functions/local/sqlite/serve-lock';
import type { LocalStoreStats } from '../../functions/local/sqlite/stats';
import { dataDir, withStores, type CliContext } from '../context';
import { commandName } from '../invocation';
import { checkHealth, type Health } from './health';
import { fingerprintOf, runningServe, staleConfigNote, type PublishedConfig } from '../local/config-source';
import { loadDotEnv } from '../local/first-run';
import { tightenConfigDir } from '../local/config-dir-mode';
import { configReferences } from '../secrets';

const HEALTH_TIMEOUT_MS = 2000;
/** A message waiting longer than this while serve runs means the worker is stuck or far behind. */
const STUCK_AFTER_S = 300;

export interface LocalStatusReport {
  mode: 'local';
  config_dir: string;
  data_dir: string;
  serve: { running: boolean; pid: number | null; url: string | null; health: Health | null; config: string | null };
  queue: LocalStoreStats['queue'] | null;
  dead_letters: { depth: number } | null;
  held: number | null;
  subscriptions: LocalStoreStats['subscriptions'] | null;
  /** Null when config.yaml does not validate (its references are unknown). */
  secrets: { referenced: string[]; missing: string[] } | null;
  attention: string[];
}

export async function collectLocalStatus(ctx: CliContext): Promise<LocalStatusReport> {
  const data = dataDir(ctx.configDir);
  // What opening the config dir could not make the owner's alone (createContext tried; before the store makes data/).
  const exposed = tightenConfigDir(ctx.configDir);
  const replaced = storeReplacedUnderServe(data);
  const stats = replaced ? undefined : await withStores(ctx, async (stores) => {
    if (!stores.localStats) throw new HookError('unsupported', `status has no local figures for ${stores.where}`);
    return stores.localStats();
  });
  const serve = runningServe(data);
  const checked = serve?.url ? await checkHealth(serve.url, HEALTH_TIMEOUT_MS) : null;
  const stale = serve ? staleConfigNote(ctx.configDir, data) : undefined;
  // serve reads .env too: a reference set there is set.
  const environment = { ...process.env };
  loadDotEnv(ctx.configDir, environment);
  const referenced = ctx.invalidConfig === undefined ? configReferences(ctx.config) : undefined;
  const missing = referenced?.filter((name) => !environment[name]) ?? [];
  const attention: string[] = [];
  if (!serve) attention.push(`serve is not running: ${commandName()} serve`);
  if (replaced) attention.push(`the store file ${replaced.file} was removed or replaced while serve${replaced.pid ? ` (pid ${replaced.pid})` : ''} runs: it answers 503 and delivers nothing until it is restarted; restart serve`);
  if (checked && !checked.ok) attention.push(`/health answered ${checked.status ?? checked.error}`);
  if (ctx.invalidConfig !== undefined) attention.push(invalidConfigNote(ctx, serve));
  else if (stale) attention.push(stale);
  if (stats && stats.dead_letters > 0) attention.push(`${stats.dead_letters} dead letter(s): ${commandName()} webhook dead-letters`);
  const oldest = stats?.queue.oldest_message_age_seconds ?? 0;
  if (serve && oldest > STUCK_AFTER_S) attention.push(`the oldest queued message has waited ${oldest}s: ${commandName()} webhook events <name> shows why`);
  if (missing.length > 0) attention.push(`config.yaml references ${missing.join(', ')}, set neither in the environment nor in ${ctx.configDir}/.env`);
  attention.push(...exposed);
  return {
    mode: 'local', config_dir: ctx.configDir, data_dir: data,
    serve: { running: Boolean(serve), pid: serve?.pid ?? null, url: serve?.url ?? null, health: checked, config: serve ? (stale ? 'older than config.yaml/.env' : 'current') : null },
    queue: stats?.queue ?? null, dead_letters: stats ? { depth: stats.dead_letters } : null, held: stats?.held ?? null, subscriptions: stats?.subscriptions ?? null,
    secrets: referenced ? { referenced, missing } : null, attention,
  };
}

/** config.yaml's errors and what serve does about them, in one line (the stale note would repeat them over several). */
function invalidConfigNote(ctx: CliContext, serve: PublishedConfig | undefined): string {
  if (!serve) return `config.yaml is invalid (${ctx.invalidConfig}): serve refuses to start until it is fixed`;
  const refused = serve.rejected?.fingerprint === fingerprintOf(ctx.configDir);
  return `config.yaml is invalid (${ctx.invalidConfig}): serve (pid ${serve.pid}) ${refused ? 'refused the edited files and ' : ''}keeps the configuration it loaded at ${serve.loaded_at}`;
}

export function renderLocal(report: LocalStatusReport): string {
  const { serve, queue, subscriptions } = report;
  // The store's figures are unknown when it was not opened (a store file replaced under serve).
  const unknown = '- (the store was not read)';
  // Labels padded to the longest ("subscriptions"), so every value starts in one column.
  const lines = [
    ['local', report.data_dir],
    ['serve', serve.running ? `running (pid ${serve.pid})${serve.url ? ` on ${serve.url}` : ''}, configuration ${serve.config}` : 'not running'],
    ['health', serve.health ? (serve.health.ok ? 'ok' : `NOT OK (${serve.health.status ?? serve.health.error})`) : '-'],
    ['queue', queue ? `${queue.waiting} waiting, ${queue.in_flight} in flight, oldest ${queue.oldest_message_age_seconds === null ? '-' : `${queue.oldest_message_age_seconds}s`}` : unknown],
    ['dead letters', report.dead_letters ? String(report.dead_letters.depth) : unknown],
    ['held', report.held === null ? unknown : `${report.held}${subscriptions && subscriptions.paused.length > 0 ? ` (paused: ${subscriptions.paused.join(', ')})` : ''}`],
    ['subscriptions', subscriptions ? String(subscriptions.total) : unknown],
    ['secrets', secretsLine(report.secrets)],
  ].map(([label, value]) => `${(label as string).padEnd(14)}${value}`);
  lines.push(report.attention.length === 0 ? 'All good.' : `Needs attention:\n${report.attention.map((a) => `  - ${a}`).join('\n')}`);
  return lines.join('\n');
}

function secretsLine(secrets: LocalStatusReport['secrets']): string {
  if (!secrets) return '- (config.yaml is invalid)';
  return secrets.missing.length === 0 ? `all ${secrets.referenced.length} set` : `missing ${secrets.missing.join(', ')}`;
}
