/** A real DynamoDB implementation (dynalite, in memory, plus TransactWriteItems) on a free 127.0.0.1 port, tables created. */
import { CreateTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { AddressInfo } from 'node:net';
import { createDynamoClient } from '../../functions/aws/dynamo';
import { tableDefinitions, tableNamesForStage, type TableNames } from '../../functions/aws/tables';
import { addTransactions } from './dynalite-transactions';

// dynalite ships no types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynalite = require('dynalite') as (options: Record<string, unknown>) => import('node:http').Server;

export interface TestDynamo {
  endpoint: string;
  client: DynamoDBClient;
  tables: TableNames;
  close(): Promise<void>;
}

/** `path`: keep the tables on disk (LevelDB) there instead of in memory. */
export async function startDynalite(stage = 'test', path?: string): Promise<TestDynamo> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(path ? { path } : {}) });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  // dynalite 4 has no TransactWriteItems (ingest's claim + records): added in front of it.
  const transactions = addTransactions(server, endpoint);
  const client = createDynamoClient({ endpoint });
  const tables = tableNamesForStage(stage);
  for (const definition of tableDefinitions(tables)) await client.send(new CreateTableCommand(definition));
  return {
    endpoint,
    client,
    tables,
    close: async () => {
      client.destroy();
      transactions.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
