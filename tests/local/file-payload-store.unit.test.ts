/** The local payload store hands out pointers only into its own directory. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FilePayloadStore } from '../../functions/local/file-payload-store';

test('a pointer into a sibling directory that shares the prefix is refused', async () => {
  const root = mkdtempSync(join(tmpdir(), 'hookagent-payloads-'));
  const store = new FilePayloadStore(join(root, 'payloads'));
  const pointer = await store.put('evt_1', '{"a":1}');
  expect(await store.get(pointer)).toBe('{"a":1}');
  mkdirSync(join(root, 'payloads-old'));
  writeFileSync(join(root, 'payloads-old', 'x.json'), 'secret');
  await expect(store.get(`file://${join(root, 'payloads-old', 'x.json')}`)).rejects.toMatchObject({ code: 'payload_pointer_invalid' });
  await expect(store.get(`file://${join(root, 'payloads', '..', 'payloads-old', 'x.json')}`)).rejects.toMatchObject({ code: 'payload_pointer_invalid' });
  await expect(store.get(`file://${join(root, 'payloads')}`)).rejects.toMatchObject({ code: 'payload_pointer_invalid' });
});
