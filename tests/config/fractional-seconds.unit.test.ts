/**
 * Hunt 9 D4: a duration in config.yaml may be a plain number of seconds (README: "500ms,
 * 10s, 2m, 1h, or plain seconds"), a fraction included, whether YAML reads it as a string
 * (`"1.5"`) or a number (`1.5`). Before, the unquoted one was refused with ajv's "must be a
 * string or a integer". Sizes stay whole bytes, refused with the size message, not ajv's.
 */
import { invalid, valid } from '../support/parse-config';


const DURATION = 'must be a duration such as 10s, 2m, 500ms or a number of seconds';
const SIZE = 'must be a size such as 1MB, 512KB, 2MiB or a number of bytes';

test.each(['1.5', '"1.5"'])('agent.timeout: %s and delivery.timeout: 0.5 are 1.5 s and 0.5 s', (seconds) => {
  const config = valid(`agent: { timeout: ${seconds}, http: { timeout: 0.25 } }\ndelivery: { timeout: 0.5 }\n`);
  expect([config.agent.timeout_ms, config.delivery.timeout_ms, config.agent.http?.timeout_ms]).toEqual([1500, 500, 250]);
});

test('whole seconds as a number are still taken', () => {
  expect(valid('agent: { timeout: 90 }').agent.timeout_ms).toBe(90_000);
});

test.each([
  ['agent: { timeout: 0.0001 }', 'agent.timeout', DURATION],
  ['agent: { timeout: -1.5 }', 'agent.timeout', DURATION],
  ['delivery: { timeout: .inf }', 'delivery.timeout', DURATION],
  ['delivery: { timeout: true }', 'delivery.timeout', DURATION],
  ['agent: { timeout: [1] }', 'agent.timeout', DURATION],
  ['webhooks: { max_payload_size: 1.5 }', 'webhooks.max_payload_size', SIZE],
  ['webhooks: { max_payload_size: true }', 'webhooks.max_payload_size', SIZE],
  ['agent: { http: { max_bytes: 1024.5 } }', 'agent.http.max_bytes', SIZE],
])('%s is refused with the format, not a type name', (yaml, path, message) => {
  expect(invalid(yaml).issues).toEqual([{ path, message }]);
});
