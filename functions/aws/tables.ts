/**
 * The three DynamoDB tables: their names per stage and their key schemas. The local
 * runtime creates them from these definitions; infra/resources.yml declares the same
 * keys for AWS (a test compares the two).
 */
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

export interface TableNames {
  subscriptions: string;
  dedup: string;
  events: string;
  /** The request log (issue 17). */
  requests: string;
}

export function tableNamesForStage(stage: string, overrides: Partial<TableNames> = {}): TableNames {
  return {
    subscriptions: overrides.subscriptions ?? `hookagent-${stage}-subscriptions`,
    dedup: overrides.dedup ?? `hookagent-${stage}-dedup`,
    events: overrides.events ?? `hookagent-${stage}-events`,
    requests: overrides.requests ?? `hookagent-${stage}-requests`,
  };
}

/** Event log index: a subscription's records by arrival. */
export const EVENTS_BY_SUBSCRIPTION_INDEX = 'by_subscription';

export function tableDefinitions(names: TableNames): CreateTableCommandInput[] {
  return [
    {
      TableName: names.subscriptions,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'name', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'name', KeyType: 'HASH' }],
    },
    {
      TableName: names.dedup,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'key', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'key', KeyType: 'HASH' }],
    },
    {
      TableName: names.events,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'event_id', AttributeType: 'S' },
        { AttributeName: 'subscription', AttributeType: 'S' },
        { AttributeName: 'arrival', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'event_id', KeyType: 'HASH' },
        { AttributeName: 'subscription', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: EVENTS_BY_SUBSCRIPTION_INDEX,
          KeySchema: [
            { AttributeName: 'subscription', KeyType: 'HASH' },
            { AttributeName: 'arrival', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    },
    {
      TableName: names.requests,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'day', AttributeType: 'S' }, { AttributeName: 'at', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'day', KeyType: 'HASH' }, { AttributeName: 'at', KeyType: 'RANGE' }],
    },
  ];
}
