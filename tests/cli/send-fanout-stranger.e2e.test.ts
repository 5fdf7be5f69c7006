/**
 * Hunt 9 (README). README, "Local mode: `hookagent serve`": "The built-in samples are real
 * events of real repositories (GitHub's pull request is `Codertocat/Hello-World` #2), so for
 * a subscription delivering to `codehost_comment`, `--send` without `--payload` refuses,
 * before anything is posted, instead of commenting there with your token".
 *
 * The walkthrough's `pr-review` (codehost_comment) plus any other pull_request subscription:
 * before, `webhook test <other> --send` posted the Codertocat sample to /webhooks/github,
 * which fanned it out to pr-review too, and the worker commented on Codertocat/Hello-World
 * #2 with the user's token. Now the sample is refused for every subscription it reaches.
 */
import { buildCli, runCli, tempConfigDir } from '../support/cli';
import { startServe, stopServe, type Serve } from '../support/serve';
import { useFakeCodehost, type FakeCodehost } from '../support/fake-codehost';

beforeAll(() => buildCli(), 60_000);

let host: FakeCodehost;
useFakeCodehost((h) => (host = h));

test('webhook test <log subscription> --send does not make pr-review comment on Codertocat/Hello-World', async () => {
  const yaml = `webhooks:\n  github: { secret: \${GITHUB_WEBHOOK_SECRET} }\ndelivery:\n  codehost:\n    github: { token: \${GITHUB_TOKEN}, api_url: ${host.url} }\n`;
  const dir = tempConfigDir(yaml, 'hookagent-send-fanout-');
  const env = { GITHUB_WEBHOOK_SECRET: 'gh-secret', GITHUB_TOKEN: 'ghp_fake0123456789' };
  const hk = (...args: string[]) => runCli(['--config-dir', dir, ...args], env);
  expect((await hk('webhook', 'subscribe', 'pr-review', '--events', 'pull_request.opened,pull_request.synchronize', '--skills', 'code-review', '--deliver', 'codehost_comment', '--prompt', 'Review pull request {pull_request.html_url}: {pull_request.title}')).code).toBe(0);
  expect((await hk('webhook', 'subscribe', 'ready', '--events', 'pull_request', '--prompt', 'r {pull_request.title}')).code).toBe(0);
  const serve: Serve = await startServe(dir, env, { quiet: true });
  try {
    // The guard the README describes, for pr-review itself: holds.
    const own = await hk('webhook', 'test', 'pr-review', '--send');
    expect(own.stderr).toContain('Not sent: the built-in sample is a pull_request.opened event of Codertocat/Hello-World');
    const sent = await hk('webhook', 'test', 'ready', '--send', '--wait', '10');
    expect(sent.code).toBe(1);
    expect(sent.stderr).toContain("Not sent: the built-in sample is a pull_request.opened event of Codertocat/Hello-World, a real repository: 'pr-review', which takes this event too, delivers to codehost_comment");
    expect(sent.stderr).toContain("webhook test ready --dry-run");
    // Nothing reached serve: no request was logged, so no worker could comment anywhere.
    expect(JSON.parse((await hk('webhook', 'requests', '--json')).stdout)).toEqual([]);
    expect(host.comments.get('/repos/Codertocat/Hello-World/issues/2') ?? []).toEqual([]);
    // With the user's own payload the event goes where it came from: sent.
    const own2 = await hk('webhook', 'test', 'ready', '--send', '--payload', JSON.stringify({ action: 'opened', number: 3, pull_request: { number: 3, title: 't', head: { sha: 'a'.repeat(40) } }, repository: { full_name: 'octo/widgets' } }), '--event', 'pull_request');
    expect(own2.stdout).toContain('POST /webhooks/github → 202');
  } finally {
    await stopServe(serve);
  }
}, 60_000);
