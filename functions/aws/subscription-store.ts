/** SubscriptionStore over the DynamoDB `subscriptions` table (one item per name). */
import {
  DeleteItemCommand, GetItemCommand, PutItemCommand, ScanCommand, type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { HookError } from '../core/errors';
import type { SubscriptionStore } from '../core/ports';
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
    await this.write(subscription, 'attribute_not_exists(#name)', () =>
      new HookError('subscription_exists', `A subscription named '${subscription.name}' already exists; use 'hookagent webhook update ${subscription.name}' to change it`));
  }

  async put(subscription: Subscription): Promise<void> {
    await this.write(subscription, 'attribute_exists(#name)', () => notFound(subscription.name));
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

  private async write(subscription: Subscription, condition: string, onConflict: () => HookError): Promise<void> {
    try {
      await this.client.send(new PutItemCommand({
        TableName: this.table, Item: toItem(subscription),
        ConditionExpression: condition, ExpressionAttributeNames: { '#name': 'name' },
      }));
    } catch (error) {
      if (isConditionalFailure(error)) throw onConflict();
      throw storeUnavailable('The subscription store', error);
    }
  }
}
