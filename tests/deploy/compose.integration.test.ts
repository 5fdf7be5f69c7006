/** functions/aws/runtime.ts: configuration and secrets re-read after their max age (rotated secrets apply without a redeploy). */
import { refreshing } from '../../functions/aws/runtime';
import { jsonLogger } from '../../functions/core/log';
import { ManualClock } from '../support/recording-queue';

function setup(results: Array<string | Error>) {
  const clock = new ManualClock();
  const logs: string[] = [];
  let builds = 0;
  const get = refreshing(async () => {
    const next = results[Math.min(builds, results.length - 1)] as string | Error;
    builds += 1;
    if (next instanceof Error) throw next;
    return next;
  }, jsonLogger((line) => logs.push(line)), { maxAgeSeconds: 300, clock });
  return { get, clock, logs, builds: () => builds };
}

test('builds once, reuses it within the max age, and builds again after it', async () => {
  const { get, clock, builds } = setup(['secret-v1', 'secret-v2']);
  expect(await get()).toBe('secret-v1');
  clock.advance(299_000);
  expect(await get()).toBe('secret-v1');
  expect(builds()).toBe(1);
  clock.advance(1_000);
  expect(await get()).toBe('secret-v2');
  expect(await get()).toBe('secret-v2');
  expect(builds()).toBe(2);
});

test('a failed first build is retried on the next call; a failed rebuild keeps the previous value and says so', async () => {
  const { get, clock, logs, builds } = setup([new Error('SSM unavailable'), 'secret-v1', new Error('SSM unavailable'), 'secret-v3']);
  await expect(get()).rejects.toThrow('SSM unavailable');
  expect(await get()).toBe('secret-v1');
  clock.advance(300_000);
  expect(await get()).toBe('secret-v1');
  expect(logs.map((l) => JSON.parse(l).message)).toEqual(['could not re-read the configuration and secrets; keeping the previous ones']);
  clock.advance(300_000);
  expect(await get()).toBe('secret-v3');
  expect(builds()).toBe(4);
});

test('the Lambda logger adds the Lambda context (request id, cold start) and keeps event id and subscription on the line', async () => {
  const { lambdaLogger } = await import('../../functions/aws/runtime');
  const written: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  try {
    const logger = lambdaLogger('hookagent-worker');
    logger.withContext({
      awsRequestId: 'req-7', functionName: 'hookagent-prod-worker', functionVersion: '$LATEST', memoryLimitInMB: '512',
      invokedFunctionArn: 'arn:aws:lambda:eu-west-1:0:function:hookagent-prod-worker', logGroupName: 'g', logStreamName: 's',
      callbackWaitsForEmptyEventLoop: true, getRemainingTimeInMillis: () => 1000, done() {}, fail() {}, succeed() {},
    });
    logger.info('delivered', { event_id: 'evt_1', subscription: 'alerts' });
  } finally {
    spy.mockRestore();
  }
  const line = JSON.parse(written.join('').trim().split('\n').pop() as string);
  expect(line).toMatchObject({
    message: 'delivered', service: 'hookagent-worker', function_request_id: 'req-7', function_name: 'hookagent-prod-worker', event_id: 'evt_1', subscription: 'alerts',
  });
  expect(line).toHaveProperty('cold_start');
});
