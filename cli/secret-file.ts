/**
 * `secrets set <VAR> --file <path>`: a secret read from a file, such as a GitHub App's
 * private key (`.pem`, several lines). Bounded read (SSM's 4 KB); a file that starts like
 * a PEM block must hold a private key node:crypto can load, so a wrong file (a public key,
 * a certificate, a truncated download) is refused before anything is stored.
 */
import { openSync, readSync, closeSync, fstatSync } from 'node:fs';
import { HookError } from '../functions/core/errors';
import { usablePrivateKey } from '../functions/core/delivery/github-app';

const MAX_FILE_BYTES = 4096;

export function readSecretFile(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw new HookError('file_unreadable', `Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    if (!fstatSync(fd).isFile()) throw new HookError('file_unreadable', `${path} is not a regular file`);
    const buffer = Buffer.alloc(MAX_FILE_BYTES + 1);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    if (read > MAX_FILE_BYTES) throw new HookError('value_too_large', `${path} is larger than SSM's ${MAX_FILE_BYTES} bytes; nothing was stored`);
    const value = buffer.subarray(0, read).toString('utf8').replace(/\s+$/, '');
    if (value.startsWith('-----BEGIN')) {
      if (!/PRIVATE KEY-----/.test(value)) throw new HookError('not_a_private_key', `${path} is a PEM block but not a private key (a GitHub App needs the .pem "private key" it generated); nothing was stored`);
      // The same check as delivery's signer (github-app.ts): stored only if a GitHub App could sign with it.
      if (!usablePrivateKey(value)) throw new HookError('not_a_private_key', `${path} is not a valid PEM private key a GitHub App signs with (RSA, unencrypted); nothing was stored`);
    }
    return value;
  } finally {
    closeSync(fd);
  }
}
