import { ChangeMessageVisibilityBatchCommand, DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { replayParked } from '#shared/admin/parked';
import { ddbMock, resetAwsMocks, sqsMock } from './support/aws';
import { MERCHANT_PK, OTHER_MERCHANT_ID, storedOrder } from './support/fixtures';

const target = {
  sqs: new SQSClient({}),
  parkedUrl: 'parked',
  followUpsUrl: 'follow-ups',
  store: { ddb: ddbMock as never, table: 'unit-table' },
};

/** A parked change record of an order write: its stream sequence number, its merchant's partition. */
const parkedRecord = (sequence: string, pk = MERCHANT_PK) => {
  const order = storedOrder({ pk });
  const record: DynamoDBRecord = {
    eventName: 'MODIFY',
    dynamodb: {
      Keys: marshall({ pk, sk: order.sk }) as never,
      NewImage: marshall(order, { removeUndefinedValues: true }) as never,
      SequenceNumber: sequence,
    },
  };
  return { MessageId: `m-${sequence}`, ReceiptHandle: `r-${sequence}`, Body: JSON.stringify(record) };
};

beforeEach(() => {
  resetAwsMocks();
  sqsMock.on(DeleteMessageCommand).resolves({});
  sqsMock.on(ChangeMessageVisibilityBatchCommand).resolves({});
});

describe('parked replay', () => {
  it("replays a merchant's parked records in stream order, and leaves the later ones parked once one fails again", async () => {
    // Prepare: SQS hands them out in any order; the record at 300 fails again.
    const other = `M#${OTHER_MERCHANT_ID}`;
    sqsMock
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [parkedRecord('400'), parkedRecord('1000', other), parkedRecord('300'), parkedRecord('99')] })
      .resolves({ Messages: [] });
    const replayed: string[] = [];
    const processRecords = async ([record]: DynamoDBRecord[]) => {
      const sequence = record?.dynamodb?.SequenceNumber ?? '';
      replayed.push(sequence);
      return sequence === '300' ? sequence : undefined;
    };

    // Act
    const result = await replayParked(target, processRecords, 100);

    // Assess
    expect(replayed).toEqual(['99', '300', '1000']);
    expect(result.replayed).toBe(2);
    expect(result.left).toEqual([
      { message_id: 'm-300', why: 'its reactions failed again' },
      { message_id: 'm-400', why: 'an earlier record of its merchant failed again' },
    ]);
    expect(sqsMock.commandCalls(DeleteMessageCommand).map((call) => call.args[0].input.ReceiptHandle)).toEqual(['r-99', 'r-1000']);
  });
});
