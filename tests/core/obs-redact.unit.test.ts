/**
 * Hunt 12 (observability D2): a configured secret is masked in the forms an API or a gateway
 * quotes it in: as it is, its URL's path, and percent-encoded (encodeURIComponent, only the
 * reserved characters encoded, encodeURI, and any of them with lower-case hex), whole or
 * cut at the end of an excerpt.
 */
import { MASK, redactExcerpt, redactSecrets, secretValuesOf } from '../../functions/core/redact';

const TELEGRAM = '7012345678:AAHf9-secretTelegramBotToken_XYZ';
const WEBHOOK = 'https://hooks.slack.com/services/T0AAAA/B0BBBB/Zq8Rk2Lm5Np7Vx1Wc3Yt6Hb9';
const secrets = secretValuesOf({ delivery: { messenger: { bot_token: TELEGRAM }, teamchat: { webhook_url: WEBHOOK } }, webhooks: { custom: { secret: "pa55!word'(x)*" } } });

test.each([
  ['encodeURIComponent', `POST ${encodeURIComponent(`/bot${TELEGRAM}/sendMessage`)}`, `POST %2Fbot${MASK}%2FsendMessage`],
  ['lower-case hex (as .NET writes it)', 'POST /bot7012345678%3aAAHf9-secretTelegramBotToken_XYZ/sendMessage', `POST /bot${MASK}/sendMessage`],
  ['the whole URL, encoded', `url=${encodeURIComponent(WEBHOOK)}&x=1`, `url=${MASK}&x=1`],
  ['the URL path, encoded', `no route for ${encodeURIComponent('/services/T0AAAA/B0BBBB/Zq8Rk2Lm5Np7Vx1Wc3Yt6Hb9')}`, `no route for ${MASK}`],
  ['only the reserved characters encoded', 'bad secret pa55%21word%27%28x%29%2A', `bad secret ${MASK}`],
  ['encodeURIComponent, which keeps !\'()*', `bad secret ${encodeURIComponent("pa55!word'(x)*")}`, `bad secret ${MASK}`],
])('%s', (_form, text, masked) => {
  expect(redactSecrets(text, secrets)).toBe(masked);
});

test('encodeURI: a secret with a space and a non-ASCII letter', () => {
  const secret = 'open sesame ä';
  expect(redactSecrets(`token=${encodeURI(secret)};`, [secret])).toBe(`token=${MASK};`);
  expect(redactSecrets(`token=${encodeURIComponent(secret)};`, [secret])).toBe(`token=${MASK};`);
});

test('an excerpt cut inside the encoded form masks its start', () => {
  const text = `${'x'.repeat(20)}${encodeURIComponent(TELEGRAM)}`;
  expect(redactExcerpt(text, [TELEGRAM], 34)).toBe(`${'x'.repeat(20)}${MASK}`);
});

test('text without a secret, and a secret without characters to encode, are as before', () => {
  expect(redactSecrets('nothing to see %3A here', secrets)).toBe('nothing to see %3A here');
  expect(redactSecrets('key sk-abc123def456 quoted', ['sk-abc123def456'])).toBe(`key ${MASK} quoted`);
});
