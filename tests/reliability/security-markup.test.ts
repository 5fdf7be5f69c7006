/**
 * Chat and comment markup, through `hookagent serve` (issue 15, items 3 and 4): payload
 * text reaches the reply (the echo agent returns the rendered prompt, as a model quoting
 * the payload would), and local servers speaking Slack's, Telegram's, GitHub's and
 * GitLab's wire formats read what was sent the way those services do:
 * - Slack: no live `<!channel>`, `<!here>`, `<!everyone>`, `<@U…>`, `<#C…>`, `<!subteam^…>`;
 *   the only `<…>` are http(s) links;
 * - Telegram (HTML parse mode): no tag and no entity but our escapes; the text Telegram
 *   shows is exactly the reply, for every tag and entity Telegram knows;
 * - GitHub/GitLab: no live @mention unless `delivery.codehost.allow_mentions` is true.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli, runCli } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer, type Recorded } from '../support/local-http';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';
import { Tally } from './tally';

const tally = new Tally('security');
const ENV = { SLACK_WEBHOOK_URL: '', TG_TOKEN: '123456:tg-test-token', GH_TOKEN: 'ghp_markup', GL_TOKEN: 'glpat-markup' };

let slack: LocalServer;
let telegram: LocalServer;
let github: LocalServer;
let gitlab: LocalServer;
let serve: Serve;
let allowing: Serve;
const secrets: Record<string, string> = {};
let sequence = 0;

async function setUp(allowMentions: boolean): Promise<{ dir: string; secrets: Record<string, string> }> {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-sec-markup-'));
  writeFileSync(join(dir, 'config.yaml'), [
    'delivery:',
    '  teamchat: { provider: slack, webhook_url: ${SLACK_WEBHOOK_URL} }',
    `  messenger: { provider: telegram, bot_token: \${TG_TOKEN}, chat_id: "-100123", api_url: ${telegram.url} }`,
    '  codehost:',
    `    github: { token: \${GH_TOKEN}, api_url: ${github.url} }`,
    `    gitlab: { token: \${GL_TOKEN}, api_url: ${gitlab.url} }`,
    ...(allowMentions ? ['    allow_mentions: true'] : []),
  ].join('\n'));
  const found: Record<string, string> = {};
  for (const args of [
    ['chat', '--deliver', 'teamchat,messenger', '--prompt', '{text}'],
    ['gh', '--events', 'issues', '--deliver', 'codehost_comment', '--prompt', '{text}'],
    ['gl', '--events', 'merge_request', '--deliver', 'codehost_comment', '--prompt', '{text}'],
  ]) {
    const created = await runCli(['--config-dir', dir, 'webhook', 'subscribe', ...args], ENV);
    expect(created.code).toBe(0);
    found[args[0] as string] = /whsec_[A-Za-z0-9+/=]+/.exec(created.stdout)?.[0] ?? '';
  }
  return { dir, secrets: found };
}

beforeAll(async () => {
  buildCli();
  slack = await startLocalServer((_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
  telegram = await startLocalServer((req, res) => {
    const { text } = JSON.parse(req.body) as { text: string };
    // Telegram refuses HTML it cannot parse; we check more strictly below.
    if (telegramHtml(text).error) return sendJson(res, 400, { ok: false, error_code: 400, description: `Bad Request: can't parse entities: ${telegramHtml(text).error}` });
    sendJson(res, 200, { ok: true, result: { message_id: ++sequence, chat: { id: -100123 }, text: telegramHtml(text).text } });
  });
  const codehost = (req: Recorded, res: Parameters<LocalServer['respond']>[1]) => (req.method === 'GET' ? sendJson(res, 200, []) : sendJson(res, 201, { id: ++sequence, html_url: 'https://example.test/c' }));
  github = await startLocalServer(codehost);
  gitlab = await startLocalServer(codehost);
  ENV.SLACK_WEBHOOK_URL = `${slack.url}/services/T0/B0/hook`;
  const [strict, lenient] = await Promise.all([setUp(false), setUp(true)]);
  Object.assign(secrets, strict.secrets);
  [serve, allowing] = await Promise.all([startServe(strict.dir, ENV, { quiet: true }), startServe(lenient.dir, ENV, { quiet: true })]);
  secrets.allowingGh = lenient.secrets.gh as string;
}, 120_000);

afterAll(async () => {
  tally.flush();
  await Promise.all([serve, allowing].filter(Boolean).map((s) => stopServe(s)));
  await Promise.all([slack, telegram, github, gitlab].filter(Boolean).map((s) => s.close()));
});

async function send(target: Serve, name: string, secret: string, payload: Record<string, unknown>, eventType: string): Promise<void> {
  const response = await fetch(`${target.url}/webhooks/custom/${name}`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}`, 'x-event-type': eventType }, body: JSON.stringify(payload),
  });
  expect(response.status).toBe(202);
}

/** Posts `text` to the chat subscription; resolves with what Slack and Telegram were sent for it (both, so no test sees another's). */
async function chat(text: string): Promise<{ slack: string; telegram: Recorded }> {
  const [slackBefore, telegramBefore] = [slack.requests.length, telegram.requests.length];
  await send(serve, 'chat', secrets.chat as string, { text }, 'alert');
  await eventually(() => slack.requests.length > slackBefore && telegram.requests.length > telegramBefore, 'the Slack and Telegram messages');
  return { slack: (JSON.parse((slack.requests[slackBefore] as Recorded).body) as { text: string }).text, telegram: telegram.requests[telegramBefore] as Recorded };
}

/** What Slack makes of a message text: its control sequences, and the text people read. */
function slackRead(text: string): { sequences: string[]; shown: string } {
  const sequences = [...text.matchAll(/<([^<>]*)>/g)].map((m) => m[1] as string);
  const shown = text.replace(/<([^<>|]*)\|?([^<>]*)>/g, (_m, url: string, label: string) => label || url)
    .replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return { sequences, shown };
}

// ── Slack ─────────────────────────────────────────────────────────────────────
const SLACK_ATTACKS: Array<[string, string, string]> = [
  ['a link URL that closes the link', '[x](https://a><!channel><https://b)', '<!channel>'],
  ['a code span', 'see `<!here>` now', '<!here>'],
  ['a code block', '```\n<!everyone>\n<@U024BE7LH>\n```', '<!everyone>'],
  ['user, channel, group and date tokens', '<@U024BE7LH> <#C123|general> <!subteam^SAZ94GDB8|team> <!date^1392734382^{date}|x>', '<!subteam^SAZ94GDB8|team>'],
  ['a link label', '[<!channel>](https://example.com)', '<!channel>'],
  ['a javascript: link', '[click](javascript:alert(1))', 'javascript:alert(1)'],
  ['a link whose query carries a mention', '[ok](https://example.com/a?b=1&c=<!channel>|x)', 'ok'],
  ['pre-escaped entities', '&lt;!channel&gt; &amp;lt;!here&amp;gt;', '&lt;!channel&gt;'],
  ['bold, headings and bullets', '**<!channel>**\n# <!here>\n- <!everyone>\n~~<@U1>~~', '<!everyone>'],
  ['a bare angle-bracket link', '<https://evil.example|<!channel>>', '<!channel>'],
];

describe('Slack: no live mention can be built from payload or model text', () => {
  test.each(SLACK_ATTACKS)('%s', async (_what, text, visible) => {
    await tally.check(async () => {
      const sent = (await chat(text)).slack;
      const { sequences, shown } = slackRead(sent);
      for (const sequence of sequences) {
        // Only links, and only http(s) ones.
        expect({ text, sequence, link: /^https?:\/\/[^\s|<>]+(\|[^<>]*)?$/.test(sequence) }).toEqual({ text, sequence, link: true });
      }
      // What was neutralised is still shown, as text.
      expect(shown).toContain(visible);
    });
  });

  test('an http(s) link stays a link, its URL encoded', async () => {
    await tally.check(async () => {
      expect((await chat('see [the run](https://ci.example/run?id=1&x=<b>|y) and **this**')).slack)
        .toBe('see <https://ci.example/run?id=1&amp;x=%3Cb%3E%7Cy|the run> and *this*');
    });
  });
});

// ── Telegram ──────────────────────────────────────────────────────────────────
const TELEGRAM_TAGS = [
  '<b>b</b>', '<strong>s</strong>', '<i>i</i>', '<em>e</em>', '<u>u</u>', '<ins>n</ins>', '<s>s</s>', '<strike>k</strike>', '<del>d</del>',
  '<span class="tg-spoiler">sp</span>', '<tg-spoiler>sp</tg-spoiler>', '<a href="http://www.example.com/">inline URL</a>',
  '<a href="tg://user?id=123456789">inline mention of a user</a>', '<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>',
  '<code>inline fixed-width code</code>', '<pre>pre-formatted fixed-width code block</pre>',
  '<pre><code class="language-python">print(1)</code></pre>', '<blockquote>Block quotation</blockquote>',
  '<blockquote expandable>Expandable block quotation</blockquote>', '<tg-time unix="1647531900" format="wDT">22:45 tomorrow</tg-time>',
  '<b', 'a < b > c', '</b>', '<>', '<<b>>',
];
const TELEGRAM_ENTITIES = ['&lt;', '&gt;', '&amp;', '&quot;', '&#60;', '&#x3C;', '&#x3c;', '&#38;', '&nbsp;', '&copy;', '&', '&;', '&#;', '&#xZZ;', '&amp;lt;'];

/**
 * Telegram's HTML parse mode, as documented: the tags it supports, the four named entities
 * and numeric ones; a `<` or `&` that starts neither is an error. Returns the text shown.
 */
function telegramHtml(html: string): { text: string; tags: string[]; error?: string } {
  const tags: string[] = [];
  let text = '';
  for (let i = 0; i < html.length;) {
    const c = html[i] as string;
    if (c === '<') {
      const end = html.indexOf('>', i);
      if (end < 0) return { text, tags, error: `unclosed tag at ${i}` };
      tags.push(html.slice(i, end + 1));
      i = end + 1;
    } else if (c === '&') {
      const entity = /^&(lt|gt|amp|quot|#\d+|#x[0-9a-f]+);/i.exec(html.slice(i));
      if (!entity) return { text, tags, error: `unsupported entity at ${i}` };
      const name = (entity[1] as string).toLowerCase();
      text += name === 'lt' ? '<' : name === 'gt' ? '>' : name === 'amp' ? '&' : name === 'quot' ? '"'
        : String.fromCodePoint(name.startsWith('#x') ? parseInt(name.slice(2), 16) : Number(name.slice(1)));
      i += entity[0].length;
    } else {
      text += c;
      i += 1;
    }
  }
  return { text, tags };
}

describe('Telegram: HTML escaping is total', () => {
  test.each([...TELEGRAM_TAGS, ...TELEGRAM_ENTITIES].map((t) => [t]))('%s is shown as written', async (text) => {
    await tally.check(async () => {
      const request = (await chat(text)).telegram;
      expect(request.url).toBe(`/bot${ENV.TG_TOKEN}/sendMessage`);
      const body = JSON.parse(request.body) as { text: string; parse_mode: string };
      expect(body.parse_mode).toBe('HTML');
      const read = telegramHtml(body.text);
      expect({ text, tags: read.tags, error: read.error, shown: read.text }).toEqual({ text, tags: [], error: undefined, shown: text });
    });
  });
});

// ── GitHub / GitLab mentions ──────────────────────────────────────────────────
const MENTIONS = 'cc @alice, @octo-org/everyone and @all (&#64;bob, &#x40;carol, &commat;dave); mail a@b.example';
const CODE = '`@Override` and\n```\n@dataclass\n```';

/** The @mentions GitHub or GitLab would link in a comment: `@name` at a word start, outside code, entities decoded. */
function liveMentions(body: string): string[] {
  const prose = body.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '')
    .replace(/&#0*64;|&#x0*40;|&commat;/gi, '@');
  return [...prose.matchAll(/(?:^|[^A-Za-z0-9_])@([A-Za-z0-9_][A-Za-z0-9_/.-]*)/g)].map((m) => m[1] as string);
}

describe('GitHub and GitLab comments: mass @mentions and quick actions from payload text are neutralised', () => {
  test.each([
    ['GitHub', 'gh', () => github, { repository: { full_name: 'o/r' }, issue: { number: 7 } }, 'issues', '/repos/o/r/issues/7/comments', 'body'],
    ['GitLab', 'gl', () => gitlab, { object_kind: 'merge_request', project: { id: 5 }, object_attributes: { iid: 3 } }, 'merge_request', '/projects/5/merge_requests/3/notes', 'body'],
  ] as const)('%s', async (_host, name, server, payload, eventType, path, field) => {
    await tally.check(async () => {
      const before = server().requests.filter((r) => r.method === 'POST').length;
      await send(serve, name, secrets[name] as string, { ...payload, text: `${MENTIONS}\n/approve\n/merge\n${CODE}` }, eventType);
      await eventually(() => server().requests.filter((r) => r.method === 'POST').length > before, `the ${name} comment`);
      const posted = server().requests.filter((r) => r.method === 'POST')[before] as Recorded;
      expect(posted.url).toBe(path);
      const body = (JSON.parse(posted.body) as Record<string, string>)[field] as string;
      expect(liveMentions(body)).toEqual([]);
      // No quick action (GitLab runs `/approve` at a line start as the bot): the lines read the same.
      expect(body).not.toMatch(/^ {0,3}\/[a-z]/m);
      expect(body).toContain(`\u200b/approve\n\u200b/merge`);
      // Still readable, code untouched, e-mail addresses untouched.
      expect(body.replace(/\u200b/g, '')).toContain('cc @alice, @octo-org/everyone and @all (@bob, @carol, @dave); mail a@b.example');
      expect(body).toContain(CODE);
    });
  });

  test('delivery.codehost.allow_mentions: true leaves them live', async () => {
    await tally.check(async () => {
      const before = github.requests.filter((r) => r.method === 'POST').length;
      await send(allowing, 'gh', secrets.allowingGh as string, { repository: { full_name: 'o/r' }, issue: { number: 8 }, text: MENTIONS }, 'issues');
      await eventually(() => github.requests.filter((r) => r.method === 'POST').length > before, 'the comment');
      const body = (JSON.parse((github.requests.filter((r) => r.method === 'POST')[before] as Recorded).body) as { body: string }).body;
      expect(liveMentions(body)).toEqual(['alice', 'octo-org/everyone', 'all', 'bob', 'carol', 'dave']);
    });
  });
});
