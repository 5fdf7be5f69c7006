/**
 * Hunt 12 (chat) fixes, Slack: Markdown read as GitHub reads it before it is turned into
 * mrkdwn. Fences by CommonMark's rules (blocks.ts): a line starting with a code span is text,
 * `~~~` fences are code, a fence ends with its list item. No emphasis inside a bare URL GitHub
 * links whole or on a backslash-escaped character. A link label may hold an image (CI badges).
 * Replies are posted to a local incoming webhook on 127.0.0.1; the conversion is also checked
 * case by case.
 */
import type { Config } from '../../functions/core/config/types';
import { markdownToMrkdwn } from '../../functions/core/delivery/mrkdwn';
import { fitMrkdwn } from '../../functions/core/delivery/slack';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import type { Subscription } from '../../functions/core/types';
import { startLocalServer, type LocalServer } from '../support/local-http';

let hook: LocalServer;
beforeAll(async () => {
  hook = await startLocalServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
});
afterAll(async () => hook.close());

/** The `text` the webhook receives for `reply`. */
async function sent(reply: string): Promise<string> {
  const settings: Config['delivery'] = { timeout_ms: 2000, codehost: {}, teamchat: { provider: 'slack', webhook_url: `${hook.url}/services/T/B/X`, api_url: 'unused' } };
  const subscription: Subscription = { name: 'chat', events: [], skills: [], deliver: ['teamchat'], state: 'active', created_at: '', updated_at: '', secret: 'x' };
  const before = hook.requests.length;
  const outcome = await createDeliveryTargets(settings, async () => {}).teamchat.deliver({
    subscription, message: { v: 1, event_id: 'evt_c', subscription: 'chat', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '' },
    payload: {}, reply, settings, logger: jsonLogger(() => {}),
  });
  expect(outcome).toMatchObject({ status: 'delivered' });
  return (JSON.parse(hook.requests[before]!.body) as { text: string }).text;
}

describe('defect 1: fences as CommonMark reads them', () => {
  test('a line that starts with a ```code``` span reaches Slack, and the lines after it keep their formatting', async () => {
    const text = await sent('Steps:\n```npm ci``` installs the dependencies.\nThen run **tests** and see [CI](https://ci.example/run/1).');
    expect(text).toBe('Steps:\n```npm ci``` installs the dependencies.\nThen run *tests* and see <https://ci.example/run/1|CI>.');
  });

  test('a ~~~ fence is a code block: its code arrives as written', async () => {
    expect(await sent('~~~python\ndef f(**kwargs): return __name__\n~~~\n**after**')).toBe('```\ndef f(**kwargs): return __name__\n```\n*after*');
  });

  test.each([
    ['a fence indented 4 spaces is indented code: no fence, nothing formatted', 'text\n\n    ```\n    **x**\n\n**bold**', 'text\n\n    ```\n    **x**\n\n*bold*'],
    ['a fence in a list item: code as written, its closer closes it', '- ```sh\n  pip install __x__\n  ```\n- **next**', '•\n```\npip install __x__\n```\n• *next*'],
    ['a fence in a list item ends with the item', '- ```sh\n  pip install __x__\n- **next** item\n\n```\ncode **x**\n```', '•\n```\npip install __x__\n```\n• *next* item\n\n```\ncode **x**\n```'],
    ['in a ```` fence, ```python is code, not its closer', '````\n```python\nprint(__name__)\n```\n````\n**bold**', '```\n```python\nprint(__name__)\n```\n```\n*bold*'],
    ['a ~~~ fence is not closed by ```', '~~~\n```\n**x**\n~~~\n**y**', '```\n```\n**x**\n```\n*y*'],
    ['a fence in a block quote', '> ```\n> a **b** <x>\n> ```\n> **q**', '&gt;\n```\na **b** &lt;x&gt;\n```\n&gt; *q*'],
    ['a fence in an ordered item', '1. ```js\n   let a = b**c;\n   ```', '1.\n```\nlet a = b**c;\n```'],
    ['an unclosed fence is closed at the end', '```\nunclosed **x**', '```\nunclosed **x**\n```'],
    ['a backtick in a backtick fence\'s info string: no fence', '``` `\nnot a fence **b**', '``` `\nnot a fence *b*'],
    ['\\r\\n line endings', '```\r\n**x**\r\n```\r\n**y**', '```\n**x**\n```\n*y*'],
  ])('%s', (_name, markdown, mrkdwn) => {
    expect(markdownToMrkdwn(markdown)).toBe(mrkdwn);
  });

  test('fitMrkdwn closes the code block a cut leaves open, and only then', () => {
    const mrkdwn = markdownToMrkdwn(`\`\`\`npm ci\`\`\` first\n~~~\n${'line\n'.repeat(40)}~~~\nafter`);
    expect((mrkdwn.match(/^```$/gm) ?? []).length).toBe(2);
    const note = '\n\n…(cut: the reply was 9 characters)';
    const fitted = fitMrkdwn(mrkdwn, 9, 60 + note.length);
    expect(fitted.startsWith('```npm ci``` first\n```\nline\n')).toBe(true);
    expect(fitted.endsWith(`\n\`\`\`${note}`)).toBe(true);
  });
});

describe('defect 2: no emphasis inside a bare URL or on an escaped character', () => {
  test('a GitHub link to a Python package file keeps its __init__', async () => {
    const text = await sent('See https://github.com/o/r/blob/main/pkg/__init__.py#L10 for the fix.');
    expect(text).toBe('See https://github.com/o/r/blob/main/pkg/__init__.py#L10 for the fix.');
  });

  test('an escaped asterisk is a literal asterisk, not an italic marker', async () => {
    expect(await sent('Globs match \\*.log\\* and \\*not italic\\* here')).toBe('Globs match \\*.log\\* and \\*not italic\\* here');
  });

  test.each([
    ['a www. link', 'open www.example.com/__x__/y now', 'open www.example.com/__x__/y now'],
    ['bold around a URL: the closing ** is no part of it (cmark-gfm trailing punctuation)', 'See **https://x.example/a** now', 'See *https://x.example/a* now'],
    ['a URL in parentheses with its own balanced ones', '(see https://x.example/b_(c)_) and *that*', '(see https://x.example/b_(c)_) and _that_'],
    ['~~ in a URL is no strike', 'https://x.example/~~a~~ ~~gone~~', 'https://x.example/~~a~~ ~gone~'],
    ['& in a URL is escaped', 'https://x.example/?a=1&b=__c__', 'https://x.example/?a=1&amp;b=__c__'],
    ['an escaped underscore and an escaped backslash', '\\_\\_init\\_\\_ and \\\\**b**', '\\_\\_init\\_\\_ and \\\\*b*'],
    ['an escaped [ opens no link', '\\[x](https://a.example/)', '\\[x](https://a.example/)'],
    ['an escape in a link URL is the character', '[x](https://a.example/a\\_b)', '<https://a.example/a_b|x>'],
    ['not a URL without a scheme or www.', 'pkg/__init__.py', 'pkg/*init*.py'],
  ])('%s', (_name, markdown, mrkdwn) => {
    expect(markdownToMrkdwn(markdown)).toBe(mrkdwn);
  });
});

describe('defect 4: a link around an image links where Markdown links', () => {
  test('[![CI](badge.svg)](run) opens the run, labelled with the alt text, and leaves no "](…)" behind', async () => {
    expect(await sent('[![CI](https://ci.example/badge.svg)](https://ci.example/run)')).toBe('<https://ci.example/run|CI>');
  });

  test.each([
    ['an image alone becomes a link, the ! dropped', '![alt text](https://img.example/a.png)', '<https://img.example/a.png|alt text>'],
    ['a badge with no alt text', '[![](https://b.example/x.svg)](https://run.example/1) done', '<https://run.example/1> done'],
    ['two badges in a row', '[![a](https://b.example/1.svg)](https://r.example/1) [![b](https://b.example/2.svg)](https://r.example/2)', '<https://r.example/1|a> <https://r.example/2|b>'],
    ['balanced brackets in a label', '[see [RFC] 9110](https://www.rfc-editor.org/rfc/rfc9110)', '<https://www.rfc-editor.org/rfc/rfc9110|see [RFC] 9110>'],
    ['a link holds no link: the inner one is the link', '[a [b](https://b.example/)](https://c.example/)', '[a <https://b.example/|b>](https://c.example/)'],
    ['an image alt naming another host is shown as text', '[![https://github.com/o/r](https://x.example/b.svg)](https://evil.example/)', 'https://github.com/o/r (<https://evil.example/>)'],
    ['a code span naming another host in a label is shown as text', '[`https://github.com/o/r`](https://evil.example/)', '`https://github.com/o/r` (<https://evil.example/>)'],
    ['an unbalanced label is no link', '[a [b](https://c.example/)x', '[a <https://c.example/|b>x'],
  ])('%s', (_name, markdown, mrkdwn) => {
    expect(markdownToMrkdwn(markdown)).toBe(mrkdwn);
  });

  test('a line of 40,000 link openers converts in linear time', () => {
    const started = process.hrtime.bigint();
    expect(markdownToMrkdwn('[a]('.repeat(10_000))).toBe('[a]('.repeat(10_000));
    expect(markdownToMrkdwn('[]('.repeat(13_000))).toBe('[]('.repeat(13_000));
    // Quadratic, these took 5 and 8 seconds.
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(1_500);
  });
});
