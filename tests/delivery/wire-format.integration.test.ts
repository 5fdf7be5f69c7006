/**
 * Hunt 2 (delivery) fixes against local servers speaking each vendor's wire format:
 * Slack mrkdwn (code spans on every kind of line, links with parentheses, the 40,000 cut),
 * a subscription channel an incoming webhook cannot honour, the code hosts' validation
 * reasons, and Telegram's group-to-supergroup migration.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import githubExamples from '@octokit/webhooks-examples';
import type { Config } from '../../functions/core/config/types';
import { markdownToMrkdwn } from '../../functions/core/delivery/mrkdwn';
import { fitMrkdwn } from '../../functions/core/delivery/slack';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import type { Source, Subscription } from '../../functions/core/types';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

const logs: string[] = [];
const sleep = async () => {};

function request(source: Source, event: string, payload: Record<string, unknown>, reply: string, subscription: Partial<Subscription> = {}): DeliveryRequest {
  return {
    subscription: { name: 'wire', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x', ...subscription },
    message: { v: 1, event_id: 'evt_w', subscription: 'wire', source, event, delivery_id: 'd', received_at: '' },
    payload, reply, settings: { timeout_ms: 500, codehost: {} }, logger: jsonLogger((l) => logs.push(l)),
  };
}

/** A Slack incoming webhook: answers `ok` and keeps each posted `text`. */
async function slackWebhook(): Promise<{ server: LocalServer; texts: () => string[]; deliver: (reply: string, subscription?: Partial<Subscription>) => ReturnType<ReturnType<typeof createDeliveryTargets>['teamchat']['deliver']> }> {
  const server = await startLocalServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
  const settings: Config['delivery'] = { timeout_ms: 500, codehost: {}, teamchat: { provider: 'slack', webhook_url: `${server.url}/services/T/B/X`, api_url: 'unused' } };
  const target = createDeliveryTargets(settings, sleep).teamchat;
  return {
    server,
    texts: () => server.requests.map((r) => (JSON.parse(r.body) as { text: string }).text),
    deliver: (reply, subscription = {}) => target.deliver({ ...request('custom', 'alert', {}, reply, subscription), settings }),
  };
}

describe('D4: Slack keeps code spans verbatim on every kind of line', () => {
  test.each([
    ['- Define `__init__` and `__repr__` here', '• Define `__init__` and `__repr__` here'],
    ['* call `f(*args, **kw)` with `x**2**y`', '• call `f(*args, **kw)` with `x**2**y`'],
    ['- Glob `*.log *.tmp` and `a*b*c`', '• Glob `*.log *.tmp` and `a*b*c`'],
    ['## Backup runs at `*/5 * * * *` (every 5 min)', '*Backup runs at `*/5 * * * *` (every 5 min)*'],
    ['### Pass `**kwargs` to `f()`', '*Pass `**kwargs` to `f()`*'],
    ['# Costs 5 * 3 = 15, **really**', '*Costs 5 * 3 = 15, really*'],
    ['- a `<!here>` & ``x`y`` **b**', '• a `&lt;!here&gt;` &amp; ``x`y`` *b*'],
    ['**see `a_b_c` now**', '*see `a_b_c` now*'],
  ])('%p → %p', (markdown, mrkdwn) => {
    expect(markdownToMrkdwn(markdown)).toBe(mrkdwn);
  });

  test('the findings list hookagent writes reaches the webhook with the Python path as written', async () => {
    const slack = await slackWebhook();
    try {
      const reply = 'Review done.\n\n## Findings\n- **major** `app/__init__.py` line 3: `__all__` misses `load`';
      expect(await slack.deliver(reply)).toEqual({ status: 'delivered', detail: 'incoming webhook' });
      expect(slack.texts()[0]).toBe('Review done.\n\n*Findings*\n• *major* `app/__init__.py` line 3: `__all__` misses `load`');
    } finally {
      await slack.server.close();
    }
  });
});

describe('D6: a link whose URL has balanced parentheses is one Slack link', () => {
  test.each([
    ['See [Rust (language)](https://en.wikipedia.org/wiki/Rust_(programming_language)) for details', 'See <https://en.wikipedia.org/wiki/Rust_(programming_language)|Rust (language)> for details'],
    ['[a](https://x.example/f(a(b))c) and [b](https://y.example/)', '<https://x.example/f(a(b))c|a> and <https://y.example/|b>'],
    // Unbalanced: no link (CommonMark), kept as the text it was.
    ['[a](https://x.example/f(a) rest', '[a](https://x.example/f(a) rest'],
    ['- [docs](https://learn.example/api(v=1).aspx)', '• <https://learn.example/api(v=1).aspx|docs>'],
  ])('%p → %p', (markdown, mrkdwn) => {
    expect(markdownToMrkdwn(markdown)).toBe(mrkdwn);
  });

  test('on the wire', async () => {
    const slack = await slackWebhook();
    try {
      await slack.deliver('See [Foo (bar)](https://en.wikipedia.org/wiki/Foo_(bar)).');
      expect(slack.texts()[0]).toBe('See <https://en.wikipedia.org/wiki/Foo_(bar)|Foo (bar)>.');
    } finally {
      await slack.server.close();
    }
  });
});

describe('D7: the Slack 40,000 cut', () => {
  const xmlLog = () => {
    const lines = ['Here is the log:', '```'];
    while (lines.join('\n').length < 29_900) lines.push('<item id="1">a &amp; b</item>');
    lines.push('```', '**Verdict:** the <item> tags are fine.');
    return lines.join('\n');
  };

  test('a 30,000-character reply full of `<`: cut between entities, the code block closed, the reply\'s own size reported', async () => {
    const slack = await slackWebhook();
    try {
      const reply = xmlLog();
      expect(await slack.deliver(reply)).toMatchObject({ status: 'delivered' });
      const sent = slack.texts()[0]!;
      expect(sent.length).toBeLessThanOrEqual(40_000);
      const note = `\n\n…(cut: the reply was ${reply.length} characters)`;
      expect(sent.endsWith(note)).toBe(true);
      const body = sent.slice(0, -note.length);
      // Every & is a whole entity; no half link; the block is closed before the note.
      expect(body).not.toMatch(/&(?!(amp|lt|gt);)/);
      expect((body.match(/^```$/gm) ?? []).length % 2).toBe(0);
      expect(body.endsWith('\n```')).toBe(true);
    } finally {
      await slack.server.close();
    }
  });

  test('never inside an entity or a link, at any cut point', () => {
    const mrkdwn = markdownToMrkdwn(`${'a &amp; <b> [l](https://x.example/?q=1&r=2) '.repeat(40)}`);
    for (let limit = 60; limit < 200; limit++) {
      const fitted = fitMrkdwn(mrkdwn, 999, limit);
      expect(fitted.length).toBeLessThanOrEqual(limit);
      const body = fitted.slice(0, fitted.indexOf('\n\n…(cut: the reply was 999 characters)'));
      expect(body).not.toMatch(/&(?!(amp|lt|gt);)/);
      expect(body).not.toMatch(/<[^>]*$/);
      expect(mrkdwn.startsWith(body)).toBe(true);
    }
  });

  test('a fence cut in half is dropped, and a block left open is closed', () => {
    const mrkdwn = `intro\n\`\`\`\ncode line\n\`\`\`\n${'after '.repeat(30)}`;
    const note = '\n\n…(cut: the reply was 7 characters)';
    // The cut falls inside the closing fence line: "``" is dropped and the block closed.
    expect(fitMrkdwn(mrkdwn, 7, 'intro\n```\ncode line\n``'.length + note.length + 4)).toBe(`intro\n\`\`\`\ncode line\n\`\`\`${note}`);
    expect(fitMrkdwn('short', 5, 40_000)).toBe('short');
  });
});

describe('D5: a subscription channel with an incoming webhook', () => {
  test('is delivered to the webhook\'s own channel, and the outcome and log say the channel is not used', async () => {
    const slack = await slackWebhook();
    logs.length = 0;
    try {
      const outcome = await slack.deliver('for #security-alerts only', { channel: '#security-alerts' });
      expect(outcome).toMatchObject({ status: 'delivered' });
      const detail = (outcome as { detail: string }).detail;
      expect(detail).toContain('incoming webhook');
      expect(detail).toContain('#security-alerts is not used');
      expect(detail).toContain('delivery.teamchat.bot_token');
      expect(JSON.parse(slack.server.requests[0]!.body)).toEqual({ text: 'for #security-alerts only', mrkdwn: true, unfurl_links: false, unfurl_media: false, link_names: false });
      const line = logs.map((l) => JSON.parse(l) as { level: string; message: string; reason?: string }).find((l) => l.message === 'teamchat_channel_not_used');
      expect(line).toMatchObject({ level: 'warn', reason: expect.stringContaining('#security-alerts') });
    } finally {
      await slack.server.close();
    }
  });
});

describe('D8: code-host validation errors keep the host\'s reason', () => {
  const example = (event: string) => githubExamples.find((g) => g.name === event)!.examples[0] as Record<string, unknown>;
  const fixture = (name: string) => JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', name), 'utf8')) as Record<string, unknown>;
  /** Lists answer empty and `GET /user` names a user; every write gets `refusal`. */
  const codehost = (refusal: [number, unknown]) => startLocalServer((req, res) => {
    if (req.method === 'GET') return sendJson(res, 200, /\/user$/.test(req.url) ? { id: 7, login: 'bot' } : []);
    return sendJson(res, refusal[0], refusal[1]);
  });

  test('GitHub 422 "Validation Failed" names errors[].message', async () => {
    const api = await codehost([422, {
      message: 'Validation Failed',
      errors: [{ resource: 'IssueComment', code: 'custom', field: 'body', message: 'body is too long' }],
      documentation_url: 'https://docs.github.com/rest/issues/comments#create-an-issue-comment',
    }]);
    try {
      const settings: Config['delivery'] = { timeout_ms: 500, codehost: { github: { token: 'ghp_T', api_url: api.url } } };
      const outcome = await createDeliveryTargets(settings, sleep).codehost_comment.deliver({ ...request('github', 'issues', example('issues'), 'hi', { comment_mode: 'new' }), settings });
      expect(outcome).toEqual({ status: 'failed', retryable: false, code: 'http_422', message: 'GitHub refused the delivery (422): Validation Failed: body is too long' });
    } finally {
      await api.close();
    }
  });

  test('GitHub 422 errors without a message name resource, field and code', async () => {
    const api = await codehost([422, { message: 'Validation Failed', errors: [{ resource: 'IssueComment', field: 'body', code: 'missing_field' }] }]);
    try {
      const settings: Config['delivery'] = { timeout_ms: 500, codehost: { github: { token: 'ghp_T', api_url: api.url } } };
      const outcome = await createDeliveryTargets(settings, sleep).codehost_comment.deliver({ ...request('github', 'issues', example('issues'), 'hi', { comment_mode: 'new' }), settings });
      expect(outcome).toMatchObject({ code: 'http_422', message: 'GitHub refused the delivery (422): Validation Failed: IssueComment body missing_field' });
    } finally {
      await api.close();
    }
  });

  test('GitLab 400 {"message":{"note":[…]}} names the field and its messages', async () => {
    const api = await codehost([400, { message: { note: ['is too long (maximum is 1000000 characters)'], base: ['Note cannot be saved'] } }]);
    try {
      const settings: Config['delivery'] = { timeout_ms: 500, codehost: { gitlab: { token: 'glpat-T', api_url: `${api.url}/api/v4` } } };
      const outcome = await createDeliveryTargets(settings, sleep).codehost_comment.deliver({ ...request('gitlab', 'merge_request', fixture('gitlab/merge_request.json'), 'hi', { comment_mode: 'new' }), settings });
      expect(outcome).toEqual({
        status: 'failed', retryable: false, code: 'http_400',
        message: 'GitLab refused the delivery (400): note is too long (maximum is 1000000 characters); Note cannot be saved',
      });
    } finally {
      await api.close();
    }
  });
});

describe('D9: Telegram group upgraded to a supergroup', () => {
  const migrated = { ok: false, error_code: 400, description: 'Bad Request: group chat was upgraded to a supergroup chat', parameters: { migrate_to_chat_id: -1001234567890 } };

  test('the failure names the new chat id and the setting to change', async () => {
    const api = await startLocalServer((_req, res) => sendJson(res, 400, migrated));
    try {
      const settings: Config['delivery'] = { timeout_ms: 500, codehost: {}, messenger: { provider: 'telegram', bot_token: '1:SECRET', chat_id: '-100123', api_url: api.url } };
      const target = createDeliveryTargets(settings, sleep).messenger;
      expect(await target.deliver({ ...request('custom', 'alert', {}, 'hi'), settings })).toEqual({
        status: 'failed', retryable: false, code: 'http_400',
        message: 'Telegram refused the delivery (400): Bad Request: group chat was upgraded to a supergroup chat; the group is now the supergroup -1001234567890: set delivery.messenger.chat_id to "-1001234567890"',
      });
      // A subscription's own --chat-id is the one to change.
      const own = await target.deliver({ ...request('custom', 'alert', {}, 'hi', { chat_id: '-100999' }), settings });
      expect(own).toMatchObject({ message: expect.stringContaining('the group is now the supergroup -1001234567890: run hookagent webhook update wire --chat-id=-1001234567890') });
    } finally {
      await api.close();
    }
  });
});
