/**
 * The token serve's console asks for. Its port is the one proxies and tunnels expose: a
 * proxy on the same machine (nginx's plain `proxy_pass http://127.0.0.1:8644`) adds no
 * forwarding header and makes every client a loopback peer, so "local" cannot be told from
 * the request. The token is kept in the data dir (mode 0600), made at the first start and
 * read at the next ones, so a bookmarked `/console?token=…` and the browser's auth cookie
 * keep working across restarts. It goes to the start banner, never to the log.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { HookError } from '../../functions/core/errors';

export const CONSOLE_TOKEN_FILE = 'console-token';

/** Where a user finds the token, for the console's 401 answers (the file's path stays out: they may go through a proxy). */
export const CONSOLE_TOKEN_FROM = 'the token in the console URL serve printed when it started';

const TOKEN = /^[0-9a-f]{32,128}$/;

export interface ConsoleToken {
  token: string;
  /** The key of the auth cookie's digest, derived from the token: the same after a restart. */
  cookieKey: Buffer;
}

function read(file: string): string | undefined {
  try {
    const text = readFileSync(file, 'utf8').trim();
    return TOKEN.test(text) ? text : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new HookError('file_unreadable', `Cannot read the console token ${file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** A new token, written whole (a temporary file renamed over) with mode 0600. */
function create(file: string): string {
  const token = randomBytes(24).toString('hex');
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${token}\n`, { mode: 0o600 });
    renameSync(temporary, file);
  } catch (error) {
    throw new HookError('store_unavailable', `Cannot write the console token ${file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return token;
}

/** serve's console token from `{dataDir}/console-token`; made there when absent or not a token (an empty file of a crash). */
export function consoleToken(dataDir: string): ConsoleToken {
  const file = join(dataDir, CONSOLE_TOKEN_FILE);
  let token = read(file);
  if (token === undefined) {
    token = create(file);
  } else if ((statSync(file).mode & 0o077) !== 0) {
    // Readable by others (copied with a loose umask): only its owner may read it.
    chmodSync(file, 0o600);
  }
  return { token, cookieKey: createHmac('sha256', token).update('hookagent console auth cookie').digest() };
}

/**
 * The console URL of the start banner. The console answers loopback host names only, so a
 * serve bound to every address (0.0.0.0, ::) is named by 127.0.0.1 there.
 */
export function consoleUrl(address: AddressInfo, token: string): string {
  const host = address.address === '0.0.0.0' || address.address === '::' ? '127.0.0.1' : address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}/console?token=${token}`;
}
