/**
 * The wall clock steps while `hookagent serve` works (NTP correcting a drifted clock, a board
 * without an RTC corrected after boot, a VM resumed). serve runs with a preload that shifts
 * its Date (tests/local/clock-shift.cjs) and leaves its monotonic clock alone, as a step does.
 * - Forward: a message in flight must not be handed to a second handler, nor its live lease
 *   taken over: the agent runs and delivers once (hunt 10, defect 1).
 * - Backward: what was waiting must not wait until the clock has caught up again (hours).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCli, runCli, tempConfigDir } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';

const env = { OPENAI_API_KEY: 'sk-clock', TELEGRAM_BOT_TOKEN: '9:clock' };
let llm: LocalServer;
let telegram: LocalServer;
/** Names whose model calls are held until `answer(name)`: an agent still thinking. */
const thinking = new Set<string>();
const answered: Array<() => void> = [];

const nameIn = (text: string): string => /Alert (?:<untrusted-data-\w+>)?([\w-]+)/.exec(text)?.[1] ?? '';
const modelCallsFor = (name: string) => llm.requests.filter((r) => nameIn(r.body) === name).length;
const postsOf = (name: string) => telegram.requests.filter((r) => (JSON.parse(r.body) as { text: string }).text.includes(`Reply to ${name}`)).length;
function answer(name: string): void {
  thinking.delete(name);
  for (const wake of answered.splice(0)) wake();
}

beforeAll(async () => {
  buildCli();
  llm = await startLocalServer(async (req, res) => {
    const prompt = (JSON.parse(req.body) as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'user')?.content ?? '';
    const name = nameIn(prompt);
    while (thinking.has(name)) await new Promise<void>((resolve) => answered.push(resolve));
    sendJson(res, 200, { id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: `Reply to ${name}` }, finish_reason: 'stop' }] });
  });
  telegram = await startLocalServer((_req, res) => sendJson(res, 200, { ok: true, result: { message_id: telegram.requests.length } }));
}, 60_000);
afterAll(async () => {
  for (const name of [...thinking]) answer(name);
  await llm.close();
  await telegram.close();
});

interface ClockServe {
  serve: Serve;
  post(name: string): Promise<number>;
  /** Steps serve's wall clock to `ms` off the real time; resolves once serve has stepped. */
  step(ms: number): Promise<void>;
  /** Messages in serve's queue, waiting or in flight (`hookagent status`). */
  queued(): Promise<number>;
}

async function serveWithClock(): Promise<ClockServe> {
  const dir = tempConfigDir([
    `agent: { provider: openai, model: gpt-test, base_url: "${llm.url}/v1", api_key: \${OPENAI_API_KEY}, timeout: 30s }`,
    `delivery: { timeout: 5s, messenger: { provider: telegram, bot_token: \${TELEGRAM_BOT_TOKEN}, chat_id: "-100", api_url: "${telegram.url}" } }`,
  ].join('\n'), 'hookagent-clock-');
  const sub = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'alerts', '--prompt', 'Alert {name}', '--deliver', 'messenger'], env);
  expect(sub.code).toBe(0);
  const secret = /whsec_\S+/.exec(sub.stdout)![0];
  const shift = join(dir, 'clock-shift');
  writeFileSync(shift, '0');
  const serve = await startServe(dir, { ...env, CLOCK_SHIFT_FILE: shift, NODE_OPTIONS: `--require ${join(__dirname, 'clock-shift.cjs')}` });
  const applied = () => {
    try {
      return readFileSync(`${shift}.applied`, 'utf8');
    } catch {
      return '0';
    }
  };
  return {
    serve,
    post: async (name) => (await fetch(`${serve.url}/webhooks/custom/alerts`, { method: 'POST', body: JSON.stringify({ name }), headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' } })).status,
    async step(ms) {
      writeFileSync(shift, String(ms));
      await eventually(() => applied() === String(ms), 'serve\'s clock stepping');
    },
    async queued() {
      const status = await runCli(['--config-dir', dir, 'status', '--json'], env);
      const queue = (JSON.parse(status.stdout) as { queue: { waiting: number; in_flight: number } }).queue;
      return queue.waiting + queue.in_flight;
    },
  };
}

test('a forward step of 10 minutes while the agent runs: the event is run and delivered once, not handed to a second handler', async () => {
  const s = await serveWithClock();
  try {
    thinking.add('slow-one');
    expect(await s.post('slow-one')).toBe(202);
    await eventually(() => modelCallsFor('slow-one') === 1, 'the first model call');
    // The clock steps forward past the queue's visibility timeout (6 min) and the worker lease while the model thinks…
    await s.step(10 * 60_000);
    // …and the next webhook wakes the consumer, which receives what is visible.
    expect(await s.post('next-one')).toBe(202);
    await eventually(() => postsOf('next-one') === 1, 'the next event delivered');
    answer('slow-one');
    await eventually(() => postsOf('slow-one') >= 1, 'the slow event delivered');
    // Everything done: a second copy would have held its message in the queue until it was.
    await eventually(async () => (await s.queued()) === 0, 'an empty queue');
    expect({ modelCalls: modelCallsFor('slow-one'), posts: postsOf('slow-one') }).toEqual({ modelCalls: 1, posts: 1 });
  } finally {
    expect(await stopServe(s.serve)).toBe(0);
  }
}, 60_000);

test('a backward step of 3 hours: an event waiting for a worker slot runs as soon as one is free, not 3 hours later', async () => {
  const s = await serveWithClock();
  try {
    // serve works on two batches at a time: two slow events take both slots…
    for (const name of ['first-slow', 'second-slow']) {
      thinking.add(name);
      expect(await s.post(name)).toBe(202);
      await eventually(() => modelCallsFor(name) === 1, `the model call of ${name}`);
    }
    // …so the third one waits in the queue when the clock steps back.
    expect(await s.post('waiting-one')).toBe(202);
    await s.step(-3 * 3600_000);
    answer('first-slow');
    answer('second-slow');
    await eventually(() => postsOf('waiting-one') === 1, 'the waiting event delivered', 15_000);
    await eventually(async () => (await s.queued()) === 0, 'an empty queue');
    expect(['first-slow', 'second-slow', 'waiting-one'].map((name) => [modelCallsFor(name), postsOf(name)])).toEqual([[1, 1], [1, 1], [1, 1]]);
  } finally {
    expect(await stopServe(s.serve)).toBe(0);
  }
}, 60_000);
