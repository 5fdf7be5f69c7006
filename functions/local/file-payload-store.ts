/** PayloadStore in a local directory (`{config_dir}/data/payloads` under `serve`). */
import { mkdir, readFile, writeFile, rename } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { HookError } from '../core/errors';
import type { PayloadStore } from '../core/ports';

export class FilePayloadStore implements PayloadStore {
  constructor(private readonly directory: string) {}

  async put(key: string, body: string): Promise<string> {
    if (!/^[A-Za-z0-9_-]+$/.test(key)) throw new HookError('payload_key_invalid', `Invalid payload key: ${key}`);
    await mkdir(this.directory, { recursive: true });
    const path = join(this.directory, `${key}.json`);
    // Write then rename: a crash never leaves a half-written payload behind a pointer.
    await writeFile(`${path}.tmp`, body, 'utf8');
    await rename(`${path}.tmp`, path);
    return `file://${resolve(path)}`;
  }

  async get(pointer: string): Promise<string> {
    if (!pointer.startsWith('file://')) throw new HookError('payload_pointer_invalid', `Not a payload pointer: ${pointer}`);
    const path = pointer.slice('file://'.length);
    // Inside the directory itself: a sibling such as `payloads-old/` shares the prefix but is outside.
    const inside = relative(resolve(this.directory), resolve(path));
    if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) throw new HookError('payload_pointer_invalid', 'Payload pointer outside the payload directory');
    try {
      return await readFile(path, 'utf8');
    } catch {
      throw new HookError('payload_missing', `The stored payload ${pointer} no longer exists`);
    }
  }
}
