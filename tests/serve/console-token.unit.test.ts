/**
 * serve's console token in its data dir: made at the first start (mode 0600), the same at
 * the next, made again when the file holds no token (an empty file after a crash), and
 * made private again when it was left readable by others.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONSOLE_TOKEN_FILE, consoleToken, consoleUrl } from '../../cli/local/console-token';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'hookagent-console-token-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const file = () => join(dir, CONSOLE_TOKEN_FILE);
const mode = () => (statSync(file()).mode & 0o777).toString(8);

test('made once with mode 0600, then read: the token and the cookie key stay the same', () => {
  const first = consoleToken(dir);
  expect(first.token).toMatch(/^[0-9a-f]{48}$/);
  expect(readFileSync(file(), 'utf8')).toBe(`${first.token}\n`);
  expect(mode()).toBe('600');
  const again = consoleToken(dir);
  expect(again.token).toBe(first.token);
  expect(again.cookieKey.equals(first.cookieKey)).toBe(true);
});

test('a file that holds no token is replaced by a new one', () => {
  writeFileSync(file(), '', { mode: 0o600 });
  const made = consoleToken(dir);
  expect(made.token).toMatch(/^[0-9a-f]{48}$/);
  expect(readFileSync(file(), 'utf8').trim()).toBe(made.token);
});

test('a token file readable by others is kept and made private', () => {
  const token = 'ab'.repeat(20);
  writeFileSync(file(), `${token}\n`);
  chmodSync(file(), 0o644);
  expect(consoleToken(dir).token).toBe(token);
  expect(mode()).toBe('600');
});

test('the banner link names 127.0.0.1 when serve listens on every address (the console answers loopback names only)', () => {
  expect(consoleUrl({ address: '0.0.0.0', family: 'IPv4', port: 8644 }, 'abc')).toBe('http://127.0.0.1:8644/console?token=abc');
  expect(consoleUrl({ address: '::', family: 'IPv6', port: 8644 }, 'abc')).toBe('http://127.0.0.1:8644/console?token=abc');
  expect(consoleUrl({ address: '127.0.0.1', family: 'IPv4', port: 9000 }, 'abc')).toBe('http://127.0.0.1:9000/console?token=abc');
  expect(consoleUrl({ address: '::1', family: 'IPv6', port: 9000 }, 'abc')).toBe('http://[::1]:9000/console?token=abc');
});
