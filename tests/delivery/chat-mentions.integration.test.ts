/**
 * Mentions and references in what the delivery targets post, against local servers that
 * read the text the way each service does:
 * - Telegram turns every `@username` in a message into a mention (in a group it notifies
 *   that member, even one who muted the chat): none may stay live, the HTML stays valid and
 *   the text shown reads as the reply;
 * - Slack links `@here`, `@channel`, `@name` only when a message asks for it (`link_names`):
 *   hookagent never asks, and says so;
 * - GitHub and GitLab comments: issue and merge request references are inert unless
 *   `delivery.codehost.allow_mentions` is true.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import githubExamples from '@octokit/webhooks-examples';
import type { Config } from '../../functions/core/config/types';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { TELEGRAM_TEXT_LIMIT } from '../../functions/core/delivery/telegram';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import type { Source, Subscription } from '../../functions/core/types';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

const Z = '\u200b';
const sleep = async () => {};
const example = (event: string) => githubExamples.find((g) => g.name === event)!.examples[0] as Record<string, unknown>;
const fixture = (name: string) => JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', name), 'utf8')) as Record<string, unknown>;

function request(source: Source, event: string, payload: Record<string, unknown>, reply: string, settings: Config['delivery'], subscription: Partial<Subscription> = {}): DeliveryRequest {
  return {
    subscription: { name: 'refs', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x', comment_mode: 'new', ...subscription },
    message: { v: 1, event_id: 'evt_r', subscription: 'refs', source, event, delivery_id: 'd', received_at: '' },
    payload, reply, settings, logger: jsonLogger(() => {}),
  };
}

/** Telegram's HTML parse mode: its four named entities and numeric ones; a `<` or `&` that starts neither is refused. */
function telegramShown(html: string): { text: string; error?: string } {
  let text = '';
  for (let i = 0; i < html.length;) {
    if (html[i] === '<') return { text, error: `tag at ${i}` };
    if (html[i] === '&') {
      const entity = /^&(lt|gt|amp|quot|#\d+|#x[0-9a-f]+);/i.exec(html.slice(i));
      if (!entity) return { text, error: `unsupported entity at ${i}` };
      const name = (entity[1] as string).toLowerCase();
      text += name === 'lt' ? '<' : name === 'gt' ? '>' : name === 'amp' ? '&' : name === 'quot' ? '"'
        : String.fromCodePoint(name.startsWith('#x') ? parseInt(name.slice(2), 16) : Number(name.slice(1)));
      i += entity[0].length;
    } else {
      text += html[i];
      i += 1;
    }
  }
  return { text };
}

/** The @mentions Telegram detects in a message's text: `@` and a username character, not right after one. */
const telegramMentions = (text: string) => [...text.matchAll(/(?<![A-Za-z0-9_])@([A-Za-z0-9_]+)/g)].map((m) => m[1]);

describe('Telegram: no @username in a message notifies anyone', () => {
  let api: LocalServer;
  let id = 0;
  beforeAll(async () => {
    api = await startLocalServer((req, res) => {
      const shown = telegramShown((JSON.parse(req.body) as { text: string }).text);
      if (shown.error) return sendJson(res, 400, { ok: false, error_code: 400, description: `Bad Request: can't parse entities: ${shown.error}` });
      sendJson(res, 200, { ok: true, result: { message_id: ++id } });
    });
  });
  afterAll(async () => api.close());
  beforeEach(() => void (api.requests.length = 0));
  const settings = (): Config['delivery'] => ({ timeout_ms: 500, codehost: {}, messenger: { provider: 'telegram', bot_token: '1:T', chat_id: '-100', api_url: api.url } });
  const send = (reply: string) => createDeliveryTargets(settings(), sleep).messenger.deliver(request('custom', 'alert', {}, reply, settings()));
  const texts = () => api.requests.map((r) => (JSON.parse(r.body) as { text: string; parse_mode: string }));

  test('every mention gets a zero-width space after the @; the HTML is valid and reads as the reply', async () => {
    const reply = 'cc @alice, @bob_smith and @all (@Admin1); `@Override` <b>@carol</b> & <a href="tg://user?id=1">@dave</a>\n@eve at a line start';
    expect(await send(reply)).toMatchObject({ status: 'delivered' });
    const [sent] = texts();
    expect(sent!.parse_mode).toBe('HTML');
    const shown = telegramShown(sent!.text);
    expect(shown.error).toBeUndefined();
    // In Telegram a backtick is no code span: the text is shown as it is, so code is not spared.
    expect(telegramMentions(shown.text)).toEqual([]);
    expect(shown.text).toContain(`@${Z}alice`);
    expect(shown.text.replaceAll(Z, '')).toBe(reply);
  });

  test('what is not a mention stays exactly as written', async () => {
    const reply = 'mail a@b.example, me@host; price 5 @ 3; @ alone; x@y; @-dash; 2@3';
    await send(reply);
    expect(telegramShown(texts()[0]!.text).text).toBe(reply);
  });

  test('a long reply is split after the spaces are added: every part within the limit, none live', async () => {
    const reply = '@ab '.repeat(TELEGRAM_TEXT_LIMIT / 4).trimEnd().replace(/ /g, (_m, at: number) => (at % 400 === 399 ? '\n' : ' '));
    expect(await send(reply)).toMatchObject({ status: 'delivered' });
    const parts = texts().map((t) => telegramShown(t.text).text);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(TELEGRAM_TEXT_LIMIT);
      expect(telegramMentions(part)).toEqual([]);
    }
    expect(parts.join('\n').replaceAll(Z, '')).toBe(reply);
  });
});

describe('Slack: plain @here, @channel and @name are never linked', () => {
  test('the text keeps them as written, and both ways of posting send link_names: false', async () => {
    const hook = await startLocalServer((_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
    const api = await startLocalServer((_req, res) => sendJson(res, 200, { ok: true, channel: 'C1', ts: '1.2' }));
    try {
      const reply = '@here @channel @everyone: ask @alice about #general';
      for (const teamchat of [
        { provider: 'slack', webhook_url: `${hook.url}/services/T/B/X`, api_url: 'unused' },
        { provider: 'slack', bot_token: 'xoxb-1', channel: '#ops', api_url: api.url },
      ] as const) {
        const settings: Config['delivery'] = { timeout_ms: 500, codehost: {}, teamchat };
        expect(await createDeliveryTargets(settings, sleep).teamchat.deliver(request('custom', 'alert', {}, reply, settings))).toMatchObject({ status: 'delivered' });
      }
      const bodies = [hook.requests[0]!, api.requests[0]!].map((r) => JSON.parse(r.body) as Record<string, unknown>);
      for (const body of bodies) {
        expect(body).toMatchObject({ text: reply, mrkdwn: true, link_names: false });
        expect(body).not.toHaveProperty('parse');
      }
    } finally {
      await Promise.all([hook.close(), api.close()]);
    }
  });
});

describe('GitHub and GitLab: references in a comment', () => {
  let github: LocalServer;
  let gitlab: LocalServer;
  beforeAll(async () => {
    const codehost = (req: { method: string; url: string }, res: Parameters<LocalServer['respond']>[1]) => {
      if (req.url.endsWith('/user')) return sendJson(res, 200, { id: 1, login: 'bot', type: 'User' });
      return req.method === 'GET' ? sendJson(res, 200, []) : sendJson(res, 201, { id: 9, html_url: 'https://example.test/c' });
    };
    [github, gitlab] = await Promise.all([startLocalServer(codehost), startLocalServer(codehost)]);
  });
  afterAll(async () => Promise.all([github.close(), gitlab.close()]));

  const REPLY = `Duplicate of #12 and octo/other#7 (GH-3); GitLab: !4, group/project!5, &6, group/project@${'ab12'.repeat(2)}.\n\`#99 stays in code\` see https://x.example/#8`;
  const INERT = `Duplicate of #${Z}12 and octo/other#${Z}7 (GH-${Z}3); GitLab: !${Z}4, group/project!${Z}5, &${Z}6, group/project@${Z}${'ab12'.repeat(2)}.\n\`#99 stays in code\` see https://x.example/#8`;

  const posted = async (host: 'github' | 'gitlab', allow: boolean): Promise<string> => {
    const server = host === 'github' ? github : gitlab;
    const settings: Config['delivery'] = {
      timeout_ms: 500,
      codehost: host === 'github' ? { github: { token: 'ghp_x', api_url: server.url }, allow_mentions: allow } : { gitlab: { token: 'glpat-x', api_url: `${server.url}/api/v4` }, allow_mentions: allow },
    };
    server.requests.length = 0;
    const r = host === 'github' ? request('github', 'issues', example('issues'), REPLY, settings) : request('gitlab', 'merge_request', fixture('gitlab/merge_request.json'), REPLY, settings);
    expect(await createDeliveryTargets(settings, sleep).codehost_comment.deliver(r)).toMatchObject({ status: 'delivered' });
    return (JSON.parse(server.requests.find((q) => q.method === 'POST')!.body) as { body: string }).body;
  };

  test.each(['github', 'gitlab'] as const)('%s: inert by default, code and URLs as written', async (host) => {
    const body = await posted(host, false);
    expect(body.startsWith(`${INERT}\n`)).toBe(true);
  });

  test.each(['github', 'gitlab'] as const)('%s: live with allow_mentions: true', async (host) => {
    const body = await posted(host, true);
    expect(body.startsWith(`${REPLY}\n`)).toBe(true);
  });
});
