/** `secrets set <VAR> --file <pem>` against a local server speaking SSM's JSON protocol. */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSecretFile } from '../../cli/secret-file';
import { buildCli, runCli } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

const dir = mkdtempSync(join(tmpdir(), 'hookagent-pem-'));
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
const file = (name: string, text: string | Buffer) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
let ssm: LocalServer;
const stored: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  buildCli();
  ssm = await startLocalServer((req, res) => {
    stored.push(JSON.parse(req.body) as Record<string, unknown>);
    sendJson(res, 200, { Version: 1, Tier: 'Standard' });
  });
}, 60_000);
afterAll(async () => ssm.close());

test('readSecretFile: a PEM private key whole; refused: a public key, a broken PEM, an oversized file, a directory, a missing file', () => {
  expect(readSecretFile(file('app.pem', `${pem}\n`))).toBe(pem.replace(/\n$/, ''));
  expect(() => readSecretFile(file('pub.pem', publicKey.export({ type: 'spki', format: 'pem' }).toString()))).toThrow(/not a private key/);
  expect(() => readSecretFile(file('broken.pem', '-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n'))).toThrow(/not a valid PEM private key/);
  // An EC key is a private key, but not one a GitHub App signs with (RS256): refused as delivery would refuse it.
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  expect(() => readSecretFile(file('ec.pem', ec))).toThrow(/not a valid PEM private key a GitHub App signs with/);
  expect(() => readSecretFile(file('big.txt', Buffer.alloc(5000, 97)))).toThrow(/larger than SSM's 4096 bytes/);
  expect(() => readSecretFile(dir)).toThrow(/not a regular file/);
  expect(() => readSecretFile(join(dir, 'missing.pem'))).toThrow(/Cannot read .*ENOENT/);
});

test('the CLI stores a multi-line PEM from --file as a SecureString; a bad file stores nothing', async () => {
  writeFileSync(join(dir, 'config.yaml'), '');
  const env = { AWS_ENDPOINT_URL_SSM: ssm.url, AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'eu-west-1' };
  const ok = await runCli(['--config-dir', dir, 'secrets', 'set', 'GITHUB_APP_PRIVATE_KEY', '--file', join(dir, 'app.pem'), '--stage', 'prod'], env);
  expect(ok).toMatchObject({ code: 0 });
  expect(stored).toEqual([expect.objectContaining({ Name: '/hookagent/prod/GITHUB_APP_PRIVATE_KEY', Type: 'SecureString', Value: pem.replace(/\n$/, '') })]);
  expect(ok.stdout + ok.stderr).not.toContain('PRIVATE KEY-----\n');
  const bad = await runCli(['--config-dir', dir, 'secrets', 'set', 'GITHUB_APP_PRIVATE_KEY', '--file', join(dir, 'pub.pem'), '--stage', 'prod'], env);
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain('not a private key');
  expect(stored).toHaveLength(1);
}, 60_000);
