/**
 * `webhook test --dry-run` on a stage runs the agent on this machine as that stage's worker
 * would: with Bedrock, in the stage's region (--region, else aws.region, else us-east-1, as
 * every command acting on a stage), not in whatever the shell's AWS_REGION says. Before, a
 * stage without aws.region left the region to the SDK. Bedrock is a local HTTP/2 server
 * (the SDK's Bedrock client speaks HTTP/2) answering Converse; the region is read off the
 * SigV4 credential scope of the request it got.
 */
import { createServer, type Http2Server, type IncomingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { runCli, tempConfigDir } from '../support/cli';
import { useCliStage } from '../support/cli-stage';

const stage = useCliStage();
let bedrock: Http2Server;
let url: string;
const seen: IncomingHttpHeaders[] = [];
let subscriptions = 0;

beforeAll(async () => {
  bedrock = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ output: { message: { role: 'assistant', content: [{ text: 'Dry run: disk nearly full.' }] } }, stopReason: 'end_turn', usage: { inputTokens: 12, outputTokens: 6, totalTokens: 18 } }));
    });
  });
  await new Promise<void>((resolve) => bedrock.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(bedrock.address() as AddressInfo).port}`;
});
afterAll(async () => new Promise<void>((resolve) => bedrock.close(() => resolve())));

const scope = (headers: IncomingHttpHeaders | undefined) => /Credential=[^/]+\/\d{8}\/([^/]+)\/bedrock\//.exec(String(headers?.authorization ?? ''))?.[1];

async function dryRunRegion(yaml: string, args: string[] = [], agent = 'agent: { provider: bedrock, model: anthropic.claude-test }\n'): Promise<string | undefined> {
  const dir = tempConfigDir(`${yaml}${agent}`);
  const env = { ...stage.env(), AWS_ENDPOINT_URL_BEDROCK_RUNTIME: url };
  const name = `alerts${++subscriptions}`;
  const created = await runCli(['--config-dir', dir, ...args, 'webhook', 'subscribe', name, '--prompt', 'Alert {alertname}'], env);
  expect(created.code).toBe(0);
  seen.length = 0;
  const ran = await runCli(['--config-dir', dir, ...args, 'webhook', 'test', name, '--dry-run', '--payload', '{"alertname":"DiskFull"}'], env);
  expect(ran.stderr).toBe('');
  expect(ran.code).toBe(0);
  expect(ran.stdout).toContain('Dry run: disk nearly full.');
  expect(seen).toHaveLength(1);
  return scope(seen[0]);
}

test('a stage without aws.region: Bedrock is called in us-east-1, the stage\'s region, not the shell\'s eu-west-1', async () => {
  expect(await dryRunRegion('aws: { stage: prod }\n')).toBe('us-east-1');
});

test('--region and aws.region name the region as for every stage command; agent.region still wins for Bedrock', async () => {
  expect(await dryRunRegion('aws: { stage: prod, region: ap-southeast-2 }\n')).toBe('ap-southeast-2');
  expect(await dryRunRegion('', ['--stage', 'prod', '--region', 'ca-central-1'])).toBe('ca-central-1');
  expect(await dryRunRegion('aws: { stage: prod }\n', [], 'agent: { provider: bedrock, model: anthropic.claude-test, region: eu-central-1 }\n')).toBe('eu-central-1');
});
