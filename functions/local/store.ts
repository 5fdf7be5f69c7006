/**
 * The local store under `{config_dir}/data`: dynalite (DynamoDB over LevelDB) reached
 * through the same DynamoDB adapters as on AWS. LevelDB allows one process per directory,
 * so a lock file decides who opens it: `hookagent serve` holds it for its lifetime and
 * publishes its endpoint in `store.json`, and CLI commands then talk to that endpoint;
 * without a running serve, each CLI command takes the lock in turn (waiting while
 * another one holds it), so concurrent commands meet at DynamoDB's conditional writes.
 */
import { CreateTableCommand, ListTablesCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { HookError } from '../core/errors';
import { createDynamoClient } from '../aws/dynamo';
import { tableDefinitions, tableNamesForStage, type TableNames } from '../aws/tables';

export interface LocalStore {
  endpoint: string;
  client: DynamoDBClient;
  tables: TableNames;
  /** True when this process opened the files (it serves the store to others if it is `serve`). */
  owner: boolean;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** `serve` publishes its endpoint for the CLI; a CLI command keeps the store private. */
  role: 'serve' | 'cli';
  /** How long to wait for another process's lock. */
  waitMs?: number;
  /** 127.0.0.1 port for the store server; 0 = any free port. */
  port?: number;
}

const LOCAL_STAGE = 'local';

interface Published {
  pid: number;
  endpoint: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readJson<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** Takes `{dir}/store.lock` atomically; clears a lock left by a dead process. */
function tryLock(lockPath: string): boolean {
  try {
    const fd = openSync(lockPath, 'wx');
    writeSync(fd, String(process.pid));
    closeSync(fd);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const holder = Number(readFileSync(lockPath, 'utf8').trim() || NaN);
    if (Number.isInteger(holder) && alive(holder)) return false;
    rmSync(lockPath, { force: true });
    return false;
  }
}

async function reachable(client: DynamoDBClient): Promise<boolean> {
  try {
    await client.send(new ListTablesCommand({ Limit: 1 }));
    return true;
  } catch {
    return false;
  }
}

export async function createMissingTables(client: DynamoDBClient, tables: TableNames): Promise<void> {
  const existing = new Set((await client.send(new ListTablesCommand({}))).TableNames ?? []);
  for (const definition of tableDefinitions(tables)) {
    if (existing.has(definition.TableName ?? '')) continue;
    try {
      await client.send(new CreateTableCommand(definition));
    } catch (error) {
      if (!(error instanceof Error && error.name === 'ResourceInUseException')) throw error;
    }
  }
}

export async function openLocalStore(dataDir: string, options: OpenOptions): Promise<LocalStore> {
  mkdirSync(dataDir, { recursive: true });
  const lockPath = join(dataDir, 'store.lock');
  const publishedPath = join(dataDir, 'store.json');
  const tables = tableNamesForStage(LOCAL_STAGE);
  const deadline = Date.now() + (options.waitMs ?? 15_000);
  let delay = 10;
  for (;;) {
    // A running serve shares its store.
    const published = readJson<Published>(publishedPath);
    if (published && published.pid !== process.pid && alive(published.pid)) {
      const client = createDynamoClient({ endpoint: published.endpoint });
      if (await reachable(client)) {
        return { endpoint: published.endpoint, client, tables, owner: false, close: async () => client.destroy() };
      }
      client.destroy();
    }
    if (tryLock(lockPath)) break;
    if (Date.now() > deadline) {
      throw new HookError('store_busy', `The local store in ${dataDir} is held by another process (see ${lockPath}); try again, or stop that process`);
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 200);
  }

  let server: Server | undefined;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const dynalite = require('dynalite') as (o: Record<string, unknown>) => Server;
    server = dynalite({ path: join(dataDir, 'dynamo'), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
    const listening = server;
    await new Promise<void>((resolve, reject) => {
      listening.once('error', reject);
      listening.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    const endpoint = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
    const client = createDynamoClient({ endpoint });
    await createMissingTables(client, tables);
    if (options.role === 'serve') writeFileSync(publishedPath, JSON.stringify({ pid: process.pid, endpoint } satisfies Published));
    return {
      endpoint, client, tables, owner: true,
      close: async () => {
        if (options.role === 'serve') rmSync(publishedPath, { force: true });
        client.destroy();
        listening.closeAllConnections();
        await new Promise<void>((resolve) => listening.close(() => resolve()));
        rmSync(lockPath, { force: true });
      },
    };
  } catch (error) {
    server?.close();
    rmSync(lockPath, { force: true });
    throw new HookError('store_unavailable', `Cannot open the local store in ${dataDir}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
