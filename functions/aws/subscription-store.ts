/** SubscriptionStore over the DynamoDB `subscriptions` table (one item per name). */
import {
  DeleteItemCommand, GetItemCommand, PutItemCommand, ScanCommand, type DynamoDBClient, type PutItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { HookError } from '../core/errors';
import type { SubscriptionStore, SubscriptionVersion } from '../core/ports';
import type { Subscription } from '../core/types';
import { isConditionalFailure, storeUnavailable } from './dynamo';

const toItem = (s: Subscription) => marshall(s, { removeUndefinedValues: true, convertEmptyValues: false });
const notFound = (name: string) => new HookError('subscription_not_found', `No subscription named '${name}'`);

export class DynamoSubscriptionStore implements SubscriptionStore {
  constructor(private readonly client: DynamoDBClient, private readonly table: string) {}

  async list(): Promise<Subscription[]> {
    const items: Subscription[] = [];
    let start: Record<string, unknown> | undefined;
    try {
      do {
        const page = await this.client.send(new ScanCommand({
          TableName: this.table, ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start as never } : {}),
        }));
        for (const item of page.Items ?? []) items.push(unmarshall(item) as Subscription);
        start = page.LastEvaluatedKey;
      } while (start);
    } catch (error) {
      throw storeUnavailable('The subscription store', error);
    }
    return items.sort((a, b) => a.name.localeCompare(b.name));
  }

  async get(name: string): Promise<Subscription | undefined> {
    try {
      const result = await this.client.send(new GetItemCommand({
        TableName: this.table, Key: marshall({ name }), ConsistentRead: true,
      }));
      return result.Item ? (unmarshall(result.Item) as Subscription) : undefined;
    } catch (error) {
      throw storeUnavailable('The subscription store', error);
    }
  }

  async create(subscription: Subscription): Promise<void> {
    if (!(await this.putWhen(subscription, { ConditionExpression: 'attribute_not_exists(#name)', ExpressionAttributeNames: { '#name': 'name' } }))) {
      throw new HookError('subscription_exists', `A subscription named '${subscription.name}' already exists; use 'hookagent webhook update ${subscription.name}' to change it`);
    }
  }

  async put(subscription: Subscription): Promise<void> {
    if (!(await this.putWhen(subscription, { ConditionExpression: 'attribute_exists(#name)', ExpressionAttributeNames: { '#name': 'name' } }))) throw notFound(subscription.name);
  }

  async putIf(subscription: Subscription, expected: SubscriptionVersion): Promise<boolean> {
    return this.putWhen(subscription, {
      ConditionExpression: '#created = :created AND #updated = :updated',
      ExpressionAttributeNames: { '#created': 'created_at', '#updated': 'updated_at' },
      ExpressionAttributeValues: marshall({ ':created': expected.created_at, ':updated': expected.updated_at }),
    });
  }

  async delete(name: string): Promise<void> {
    try {
      await this.client.send(new DeleteItemCommand({
        TableName: this.table, Key: marshall({ name }),
        ConditionExpression: 'attribute_exists(#name)', ExpressionAttributeNames: { '#name': 'name' },
      }));
    } catch (error) {
      if (isConditionalFailure(error)) throw notFound(name);
      throw storeUnavailable('The subscription store', error);
    }
  }

  /** A conditional PutItem; false when its condition did not hold. */
  private async putWhen(subscription: Subscription, condition: Pick<PutItemCommandInput, 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'>): Promise<boolean> {
    try {
      await this.client.send(new PutItemCommand({ TableName: this.table, Item: toItem(subscription), ...condition }));
      return true;
    } catch (error) {
      if (isConditionalFailure(error)) return false;
      throw storeUnavailable('The subscription store', error);
    }
  }
}
