/**
 * Delivery targets against local servers that speak the GitHub, GitLab, Slack and
 * Telegram APIs: paths, headers, bodies, rate limits, errors, timeouts, idempotency.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import githubExamples from '@octokit/webhooks-examples';
import type { Config } from '../../functions/core/config/types';
import { githubCommentPlace, gitlabCommentPlace as gitlabPlace } from '../../functions/core/delivery/codehost-comment';
import { subjectOf } from '../../functions/core/events/subject';
import { markdownToMrkdwn } from '../../functions/core/delivery/mrkdwn';
import { splitMessage } from '../../functions/core/delivery/split';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { causedByHookagent, commentMarker } from '../../functions/core/events/loop-guard';
import { jsonLogger } from '../../functions/core/log';
import type { Source, Subscription } from '../../functions/core/types';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

// The comment places come from the one subject locator now (events/subject.ts).
const githubCommentPath = (event: string, payload: Record<string, unknown>) => githubCommentPlace(subjectOf('github', event, payload, 'e'))?.path;
const gitlabCommentPlace = (payload: Record<string, unknown>) => gitlabPlace(subjectOf('gitlab', String(payload.object_kind), payload, 'e'));
const fixture = (name: string) => JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', name), 'utf8')) as Record<string, unknown>;
const example = (event: string, index = 0) => githubExamples.find((g) => g.name === event)!.examples[index] as Record<string, unknown>;

const TOKEN = 'ghp_SECRET_TOKEN_VALUE';
const BOT = '123456:TELEGRAM_SECRET';
const waits: number[] = [];
const sleep = async (ms: number) => void waits.push(ms);
const logs: string[] = [];

function request(source: Source, event: string, payload: Record<string, unknown>, reply = 'Looks good.', subscription: Partial<Subscription> = {}): DeliveryRequest {
  return {
    subscription: { name: 'review', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x', ...subscription },
    message: { v: 1, event_id: 'evt_1', subscription: 'review', source, event, delivery_id: 'd', received_at: '' },
    payload, reply, settings: { timeout_ms: 500, codehost: {} }, logger: jsonLogger((l) => logs.push(l)),
  };
}

describe('where a comment goes', () => {
  test.each([
    ['pull_request', /^\/repos\/.+\/issues\/\d+\/comments$/], ['pull_request_review', /issues\/\d+\/comments$/], ['pull_request_review_comment', /issues\/\d+\/comments$/],
    ['issues', /issues\/\d+\/comments$/], ['issue_comment', /issues\/\d+\/comments$/], ['push', /commits\/[0-9a-f]{40}\/comments$/],
    ['commit_comment', /commits\/[0-9a-f]{40}\/comments$/], ['status', /commits\/[0-9a-f]{40}\/comments$/],
    ['workflow_job', /commits\/[0-9a-f]{40}\/comments$/], ['deployment_status', /commits\/[0-9a-f]{40}\/comments$/],
  ])('GitHub %s → %p', (event, pattern) => {
    expect(githubCommentPath(event, example(event))).toMatch(pattern.source.startsWith('^') ? /^\/issues\/\d+\/comments$/ : pattern);
  });
  test('GitHub events with nothing to comment on', () => {
    expect(githubCommentPath('star', example('star'))).toBeUndefined();
    expect(githubCommentPath('release', example('release'))).toBeUndefined();
    expect(githubCommentPath('pull_request', {})).toBeUndefined();
  });
  test.each([
    ['gitlab/merge_request.json', /^\/projects\/\d+\/merge_requests\/\d+\/notes$/, 'body'],
    ['gitlab/issue.json', /^\/projects\/\d+\/issues\/\d+\/notes$/, 'body'],
    ['gitlab/note_merge_request.json', /^\/projects\/\d+\/merge_requests\/\d+\/notes$/, 'body'],
    ['gitlab/push.json', /^\/projects\/\d+\/repository\/commits\/[0-9a-f]{40}\/comments$/, 'note'],
    ['gitlab/tag_push.json', /^\/projects\/\d+\/repository\/commits\/[0-9a-f]{40}\/comments$/, 'note'],
    ['gitlab/pipeline.json', /^\/projects\/\d+\/(merge_requests\/\d+\/notes|repository\/commits\/[0-9a-f]{40}\/comments)$/, undefined],
  ])('GitLab %s → %p', (file, pattern, field) => {
    const place = gitlabCommentPlace(fixture(file));
    // Paths are relative to the client's scope `{api_url}/projects/<id>` now.
    expect(`/projects/1${place?.path ?? ''}`).toMatch(pattern);
    if (field) expect(place?.field).toBe(field);
  });
  test('GitLab release has nothing to comment on', () => {
    expect(gitlabCommentPlace(fixture('gitlab/release.json'))).toBeUndefined();
  });
});

describe('GitHub comments', () => {
  let api: LocalServer;
  const BOT = { id: 4242, login: 'hookagent-bot', type: 'User' };
  let comments: Array<{ body: string; html_url: string; user?: typeof BOT }> = [];
  let failures: Array<[number, unknown, Record<string, string>?]> = [];
  /** Answers for the writes only (POST/PATCH), after `failures`. */
  let writeFailures: Array<[number, unknown, Record<string, string>?]> = [];
  let silent = false;
  beforeAll(async () => {
    api = await startLocalServer((req, res) => {
      if (silent) return;
      // Who the token is: markers count only in its own comments.
      if (req.url === '/user') return sendJson(res, 200, BOT);
      const next = failures.shift() ?? (req.method === 'GET' ? undefined : writeFailures.shift());
      if (next) return sendJson(res, next[0], next[1], next[2]);
      if (req.method === 'GET') return sendJson(res, 200, comments);
      const created = { body: (JSON.parse(req.body) as { body: string }).body, html_url: `https://github.com/o/r/pull/1#issuecomment-${comments.length + 1}`, user: BOT };
      comments.push(created);
      sendJson(res, 201, created);
    });
  });
  afterAll(async () => api.close());
  beforeEach(() => {
    comments = [];
    failures = [];
    writeFailures = [];
    silent = false;
    waits.length = 0;
    api.requests.length = 0;
  });
  const settings = (): Config['delivery'] => ({ timeout_ms: 300, codehost: { github: { token: TOKEN, api_url: api.url } } });
  const deliver = (r: DeliveryRequest) => createDeliveryTargets(settings(), sleep).codehost_comment.deliver({ ...r, settings: settings() });

  test('posts on the pull request with the hidden marker and GitHub headers (comment mode `new`)', async () => {
    // Sticky comments (the default for pull requests) carry a footer: tests/delivery/sticky-review.test.ts.
    const outcome = await deliver(request('github', 'pull_request', example('pull_request'), 'Looks good.', { comment_mode: 'new' }));
    expect(outcome).toEqual({ status: 'delivered', detail: 'https://github.com/o/r/pull/1#issuecomment-1' });
    const post = api.requests.find((r) => r.method === 'POST')!;
    expect(post.url).toMatch(/^\/repos\/[^/]+\/[^/]+\/issues\/\d+\/comments$/);
    expect(post.headers.authorization).toBe(`token ${TOKEN}`);
    expect(post.headers['x-github-api-version']).toBe('2022-11-28');
    expect(JSON.parse(post.body)).toEqual({ body: `Looks good.\n\n${commentMarker('review', 'evt_1')}` });
  });

  test('a retry finds the marker and does not post again', async () => {
    comments = [{ body: `earlier\n\n${commentMarker('review', 'evt_1')}`, html_url: 'https://github.com/o/r/pull/1#issuecomment-9', user: BOT }];
    const outcome = await deliver(request('github', 'issues', example('issues')));
    expect(outcome).toEqual({ status: 'delivered', detail: 'https://github.com/o/r/pull/1#issuecomment-9 (already posted)' });
    expect(api.requests.filter((r) => r.method === 'POST')).toHaveLength(0);
  });

  test('500 then 200: retried with backoff, posted once', async () => {
    failures = [[500, { message: 'Server Error' }]];
    expect((await deliver(request('github', 'pull_request', example('pull_request')))).status).toBe('delivered');
    expect(comments).toHaveLength(1);
    expect(waits.length).toBeGreaterThan(0);
  });

  test('429 with Retry-After waits as told; 403 with x-ratelimit-remaining: 0 too', async () => {
    failures = [[429, { message: 'slow down' }, { 'retry-after': '2' }]];
    expect((await deliver(request('github', 'pull_request', example('pull_request')))).status).toBe('delivered');
    expect(waits).toContain(2000);
    waits.length = 0;
    failures = [[403, { message: 'API rate limit exceeded' }, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3) }]];
    expect((await deliver(request('github', 'pull_request', example('pull_request')))).status).toBe('delivered');
    expect(waits[0]).toBeGreaterThan(1000);
  });

  test('a rate-limited comment POST is waited out in place (the marker searched again first), posted once', async () => {
    writeFailures = [[429, { message: 'slow down' }, { 'retry-after': '3' }], [429, { message: 'slow down' }, { 'retry-after': '1' }]];
    expect(await deliver(request('github', 'pull_request', example('pull_request')))).toMatchObject({ status: 'delivered' });
    expect(waits).toEqual([3000, 1000]);
    expect(comments).toHaveLength(1);
    expect(api.requests.filter((r) => r.method === 'GET').length).toBeGreaterThanOrEqual(3);
  });

  test('a long rate-limit wait is left to the queue (retryable failure)', async () => {
    failures = [[429, { message: 'slow down' }, { 'retry-after': '3600' }]];
    expect(await deliver(request('github', 'pull_request', example('pull_request')))).toMatchObject({ status: 'failed', retryable: true, code: 'rate_limited' });
  });

  test('401 Bad credentials is permanent, with GitHub\'s message, and no token anywhere', async () => {
    failures = [[401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' }]];
    const outcome = await deliver(request('github', 'pull_request', example('pull_request')));
    expect(outcome).toEqual({ status: 'failed', retryable: false, code: 'http_401', message: 'GitHub refused the delivery (401): Bad credentials' });
    expect(JSON.stringify(outcome) + logs.join('')).not.toContain(TOKEN);
  });

  test('a server that never answers → Delivery timeouts (retryable)', async () => {
    silent = true;
    const outcome = await deliver(request('github', 'pull_request', example('pull_request')));
    expect(outcome).toMatchObject({ status: 'failed', retryable: true, code: 'delivery_timeout', message: expect.stringContaining('Delivery timeouts') });
  });

  test('a non-JSON 502 page is a retryable failure, not a crash', async () => {
    failures = [[502, '<html>Bad gateway</html>'], [502, '<html>Bad gateway</html>'], [502, '<html>Bad gateway</html>']];
    expect(await deliver(request('github', 'pull_request', example('pull_request')))).toMatchObject({ status: 'failed', retryable: true, code: 'http_502' });
  });

  test('replies over 65,536 characters are cut with a visible note; the marker survives', async () => {
    await deliver(request('github', 'pull_request', example('pull_request'), 'x'.repeat(70_000)));
    const body = comments[0]!.body;
    expect(body.length).toBeLessThanOrEqual(65_536);
    expect(body).toContain('…(cut: the reply was 70000 characters)');
    // Sticky (the pull request default): the footer and markers close the comment.
    expect(body).toContain(commentMarker('review', 'evt_1'));
    expect(body.endsWith('<!-- hookagent:review:sticky -->')).toBe(true);
  });

  test('an event with nothing to comment on is a permanent failure', async () => {
    expect(await deliver(request('github', 'star', example('star')))).toMatchObject({ status: 'failed', retryable: false, code: 'nothing_to_comment' });
    // A deleted branch's push: the repository is there, the commit is not. Said so, not "no repository".
    const deleted = { ...example('push'), after: '0'.repeat(40), head_commit: null, deleted: true };
    expect(await deliver(request('github', 'push', deleted))).toMatchObject({
      status: 'failed', retryable: false, code: 'nothing_to_comment', message: 'A GitHub push event names no pull request, issue or commit to comment on',
    });
  });
});

describe('GitLab notes', () => {
  test('a merge request note with PRIVATE-TOKEN; a commit comment uses `note`', async () => {
    const api = await startLocalServer((req, res) => (req.method === 'GET' ? sendJson(res, 200, []) : sendJson(res, 201, { id: 42, body: 'x' })));
    try {
      const settings: Config['delivery'] = { timeout_ms: 500, codehost: { gitlab: { token: 'glpat-SECRET', api_url: `${api.url}/api/v4` } } };
      const target = createDeliveryTargets(settings, sleep).codehost_comment;
      expect(await target.deliver({ ...request('gitlab', 'merge_request', fixture('gitlab/merge_request.json')), settings })).toMatchObject({ status: 'delivered' });
      const post = api.requests.find((r) => r.method === 'POST')!;
      expect(post.headers['private-token']).toBe('glpat-SECRET');
      expect(post.url).toMatch(/^\/api\/v4\/projects\/\d+\/merge_requests\/\d+\/notes$/);
      expect(JSON.parse(post.body).body).toContain(commentMarker('review', 'evt_1'));
      api.requests.length = 0;
      await target.deliver({ ...request('gitlab', 'push', fixture('gitlab/push.json')), settings });
      expect(JSON.parse(api.requests.find((r) => r.method === 'POST')!.body)).toHaveProperty('note');
    } finally {
      await api.close();
    }
  });
});

describe('Slack', () => {
  test('incoming webhook: mrkdwn text; an error word is permanent', async () => {
    let answer: [number, string] = [200, 'ok'];
    const hook = await startLocalServer((_req, res) => {
      res.writeHead(answer[0], { 'content-type': 'text/plain' });
      res.end(answer[1]);
    });
    try {
      const settings: Config['delivery'] = { timeout_ms: 500, codehost: {}, teamchat: { provider: 'slack', webhook_url: `${hook.url}/services/T/B/X`, api_url: 'unused' } };
      const target = createDeliveryTargets(settings, sleep).teamchat;
      expect(await target.deliver({ ...request('custom', 'alert', {}, '**Disk** full on `db1`'), settings })).toEqual({ status: 'delivered', detail: 'incoming webhook' });
      expect(JSON.parse(hook.requests[0]!.body)).toEqual({ text: '*Disk* full on `db1`', mrkdwn: true, unfurl_links: false, unfurl_media: false, link_names: false });
      answer = [404, 'channel_not_found'];
      expect(await target.deliver({ ...request('custom', 'alert', {}), settings })).toEqual({ status: 'failed', retryable: false, code: 'http_404', message: 'Slack refused the delivery (404): channel_not_found' });
    } finally {
      await hook.close();
    }
  });

  test('chat.postMessage: bot token, per-subscription channel, ok:false errors, Retry-After', async () => {
    const script: Array<[number, unknown, Record<string, string>?]> = [
      [200, { ok: true, channel: 'C1', ts: '1.2' }], [200, { ok: false, error: 'channel_not_found' }], [429, { ok: false, error: 'ratelimited' }, { 'retry-after': '1' }], [200, { ok: true, channel: 'C2', ts: '3.4' }],
    ];
    const api = await startLocalServer((_req, res) => {
      const [status, body, headers] = script.shift()!;
      sendJson(res, status, body, headers);
    });
    try {
      const settings: Config['delivery'] = { timeout_ms: 500, codehost: {}, teamchat: { provider: 'slack', bot_token: 'xoxb-SECRET', channel: '#general', api_url: api.url } };
      const target = createDeliveryTargets(settings, sleep).teamchat;
      expect(await target.deliver({ ...request('custom', 'alert', {}, 'hi', { channel: '#ops' }), settings })).toEqual({ status: 'delivered', detail: 'channel C1 ts 1.2' });
      expect(api.requests[0]!.url).toBe('/chat.postMessage');
      expect(api.requests[0]!.headers.authorization).toBe('Bearer xoxb-SECRET');
      expect(JSON.parse(api.requests[0]!.body)).toMatchObject({ channel: '#ops', text: 'hi' });
      expect(await target.deliver({ ...request('custom', 'alert', {}), settings })).toEqual({ status: 'failed', retryable: false, code: 'slack_channel_not_found', message: 'Slack refused the message: channel_not_found' });
      waits.length = 0;
      expect((await target.deliver({ ...request('custom', 'alert', {}), settings })).status).toBe('delivered');
      expect(waits).toEqual([1000]);
    } finally {
      await api.close();
    }
  });

  test.each([
    ['**bold** and __bold__', '*bold* and *bold*'],
    ['*italic* text', '_italic_ text'],
    ['~~gone~~', '~gone~'],
    ['[docs](https://example.com/a?b=1)', '<https://example.com/a?b=1|docs>'],
    ['# Title', '*Title*'],
    ['- one\n* two', '• one\n• two'],
    ['a < b & c > d', 'a &lt; b &amp; c &gt; d'],
    ['```\n**not bold** <x>\n```', '```\n**not bold** &lt;x&gt;\n```'],
    ['use `a**b**c` here', 'use `a**b**c` here'],
    // Asterisks that are not emphasis in Markdown stay as written (cron schedules, arithmetic, globs, paths).
    ['Job cleanup runs at */5 * * * *; cleans /tmp/*.log', 'Job cleanup runs at */5 * * * *; cleans /tmp/*.log'],
    ['5 * 3 * 2 = 30', '5 * 3 * 2 = 30'],
    ['removed *.tmp and *.log files', 'removed *.tmp and *.log files'],
    ['path /var/log/* and /tmp/*', 'path /var/log/* and /tmp/*'],
    ['2*3*4 and ** spaced ** and ~~ spaced ~~', '2*3*4 and ** spaced ** and ~~ spaced ~~'],
    ['0 * * * * runs *nightly*', '0 * * * * runs _nightly_'],
    ['**Bold:** *a **b** c* *(note)* *ünïcode*', '*Bold:* _a *b* c_ _(note)_ _ünïcode_'],
  ])('mrkdwn: %p → %p', (markdown, mrkdwn) => {
    expect(markdownToMrkdwn(markdown)).toBe(mrkdwn);
  });
});

describe('Telegram', () => {
  test('HTML-escaped sendMessage; long replies split at lines, in order; chat id override; retry_after; description on errors', async () => {
    const script: Array<[number, unknown]> = [];
    let id = 0;
    const api = await startLocalServer((_req, res) => {
      const next = script.shift();
      if (next) return sendJson(res, next[0], next[1]);
      sendJson(res, 200, { ok: true, result: { message_id: ++id } });
    });
    try {
      const settings: Config['delivery'] = { timeout_ms: 500, codehost: {}, messenger: { provider: 'telegram', bot_token: BOT, chat_id: '-100', api_url: api.url } };
      const target = createDeliveryTargets(settings, sleep).messenger;
      expect(await target.deliver({ ...request('custom', 'alert', {}, '<b>x</b> & y'), settings })).toEqual({ status: 'delivered', detail: 'chat -100 message 1' });
      expect(api.requests[0]!.url).toBe(`/bot${BOT}/sendMessage`);
      expect(JSON.parse(api.requests[0]!.body)).toMatchObject({ chat_id: '-100', text: '&lt;b&gt;x&lt;/b&gt; &amp; y', parse_mode: 'HTML' });

      api.requests.length = 0;
      const lines = Array.from({ length: 300 }, (_, i) => `line ${String(i).padStart(3, '0')} ${'x'.repeat(30)}`);
      const outcome = await target.deliver({ ...request('custom', 'alert', {}, lines.join('\n'), { chat_id: '-200' }), settings });
      expect(outcome.status).toBe('delivered');
      const texts = api.requests.map((r) => JSON.parse(r.body) as { chat_id: string; text: string });
      expect(texts.length).toBe(3);
      expect(texts.every((t) => t.chat_id === '-200' && t.text.length <= 4096)).toBe(true);
      expect(texts.map((t) => t.text).join('\n')).toBe(lines.join('\n'));

      waits.length = 0;
      script.push([429, { ok: false, error_code: 429, description: 'Too Many Requests: retry after 3', parameters: { retry_after: 3 } }]);
      expect((await target.deliver({ ...request('custom', 'alert', {}), settings })).status).toBe('delivered');
      expect(waits).toEqual([3000]);

      script.push([400, { ok: false, error_code: 400, description: 'Bad Request: chat not found' }]);
      const failed = await target.deliver({ ...request('custom', 'alert', {}), settings });
      expect(failed).toEqual({ status: 'failed', retryable: false, code: 'http_400', message: 'Telegram refused the delivery (400): Bad Request: chat not found' });
      expect(JSON.stringify(failed)).not.toContain(BOT);
    } finally {
      await api.close();
    }
  });

  test('splitting keeps lines whole and cuts only lines longer than the limit', () => {
    expect(splitMessage('a\nb\nc', 3)).toEqual(['a\nb', 'c']);
    expect(splitMessage('abcdefg', 3)).toEqual(['abc', 'def', 'g']);
    expect(splitMessage('', 10)).toEqual(['']);
  });
});

describe('missing configuration and the loop guard', () => {
  test('a target whose section is missing fails permanently, naming the key', async () => {
    const targets = createDeliveryTargets({ timeout_ms: 100, codehost: {} }, sleep);
    expect(await targets.teamchat.deliver(request('custom', 'a', {}))).toMatchObject({ retryable: false, message: 'delivery.teamchat is not configured in config.yaml' });
    expect(await targets.codehost_comment.deliver(request('github', 'pull_request', example('pull_request')))).toMatchObject({ message: 'delivery.codehost.github is not configured in config.yaml' });
    expect(await targets.codehost_comment.deliver(request('custom', 'alert', { alerts: [] }))).toMatchObject({ code: 'nothing_to_comment' });
  });

  test('comments carrying our marker are recognised (GitHub comment, review, GitLab note)', () => {
    const marker = commentMarker('review', 'evt_1');
    expect(causedByHookagent({ ...example('issue_comment'), comment: { body: `x\n${marker}` } })).toBe(true);
    expect(causedByHookagent({ review: { body: marker } })).toBe(true);
    const note = fixture('gitlab/note_merge_request.json');
    expect(causedByHookagent(note)).toBe(false);
    expect(causedByHookagent({ ...note, object_attributes: { ...(note.object_attributes as object), note: `ok ${marker}` } })).toBe(true);
  });
});
