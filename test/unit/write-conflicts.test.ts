/**
 * In DynamoDB two transactions that touch one item at the same time cancel each other
 * (TransactionCanceledException with a `TransactionConflict` reason), and a single-item write that
 * meets a running transaction on its item gets TransactionConflictException. A write over the
 * capacity of its table, index or partition is throttled: a transaction is cancelled with a
 * `ThrottlingError` or `ProvisionedThroughputExceeded` reason (which the SDK does not retry), a
 * single-item write gets ProvisionedThroughputExceededException or ThrottlingException. DynamoDB
 * Local produces none of these, so they are injected here. On every write path such a failure is
 * retried with back-off and succeeds once it passes; past the retry budget the client gets 503 with
 * Retry-After in the route's envelope, never a 500, and nothing that follows a commit (list counts,
 * queue message, e-mail) happens. A DynamoDB that cannot be reached or does not answer is not
 * retried by the write path (the SDK did): 503 at once.
 */
import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as acceptRequest } from '#functions/affiliate-requests/accept';
import { handler as declineRequest } from '#functions/affiliate-requests/decline';
import { handler as createInvite } from '#functions/invites/create';
import { handler as cancelOrder } from '#functions/orders/cancel';
import { handler as createV2 } from '#functions/orders/create';
import { handler as createLegacy } from '#functions/orders/create-legacy';
import { handler as updateOrder } from '#functions/orders/update';
import { WRITE_ATTEMPTS } from '#shared/db/retry';
import { type ApiResponse, apiEvent, invoke } from './support/api';
import {
  connectionRefused,
  ddbMock,
  provisionedThroughputExceeded,
  resetAwsMocks,
  serviceUnavailable,
  sqsMock,
  throttling,
  timedOut,
  transactionCanceled,
  transactionConflict,
} from './support/aws';
import {
  COUNTS_PK,
  derivedOrderUuid,
  MERCHANT_PK,
  ORDER_PUT,
  ORDER_SEQUENCE_KEY,
  ORDER_UUID,
  orderBody,
  orderPuts,
  REQUEST_KEY,
  REQUEST_UUID,
  storedOrder,
  storedPendingRequest,
  stubAuth,
  stubOrderCreate,
  TOKENS,
  TRACE_ID,
} from './support/fixtures';

const sesMock = mockClient(SESClient);

const ORDER_KEY = { pk: MERCHANT_PK, sk: `ORDER#${ORDER_UUID}` };
const BUSY = 'The service is busy. Please retry the request.';

const pendingRequest = storedPendingRequest();

/** 503 with Retry-After, the busy message in the route's envelope. */
const expectBusy = (response: ApiResponse, envelope: 'v2' | 'legacy') => {
  expect(response.statusCode).toBe(503);
  expect(response.headers).toMatchObject({ 'content-type': 'application/json', 'retry-after': '1' });
  expect(response.body).toEqual(
    envelope === 'v2'
      ? { success: false, data: null, errors: { message: [BUSY] }, meta: { trace_id: expect.stringMatching(TRACE_ID) } }
      : { success: false, message: BUSY, data: [] },
  );
};

type Conflict = () => Error;

/**
 * A transaction can be cancelled by a conflict or by throttling, or meet either as an exception;
 * a single-item write only the exceptions.
 */
const TRANSACTION_CONFLICTS: [string, Conflict][] = [
  ['a TransactionConflict cancellation', () => transactionCanceled('None', 'TransactionConflict')],
  ['a TransactionConflictException', transactionConflict],
  ['a ThrottlingError cancellation', () => transactionCanceled('ThrottlingError', 'None')],
  ['a ProvisionedThroughputExceeded cancellation', () => transactionCanceled('None', 'ProvisionedThroughputExceeded')],
  ['a ProvisionedThroughputExceededException', provisionedThroughputExceeded],
  ['a ThrottlingException', throttling],
];
const ITEM_CONFLICTS: [string, Conflict][] = [
  ['a TransactionConflictException', transactionConflict],
  ['a ProvisionedThroughputExceededException', provisionedThroughputExceeded],
  ['a ThrottlingException', throttling],
];

/** DynamoDB out of reach or silent, after the SDK's own retries: the write may or may not have been applied. */
const UNAVAILABLE: [string, Conflict][] = [
  ['a refused connection (ECONNREFUSED)', connectionRefused],
  ['a TimeoutError', timedOut],
  ['a 500 InternalServerError', () => serviceUnavailable(500)],
];

type WritePath = {
  route: string;
  conflicts: [string, Conflict][];
  /** Stubs everything the request reads and writes, for success. */
  prepare: () => void;
  /** The write that meets the conflict, and what it answers once the conflict has passed. */
  write: {
    command: typeof TransactWriteCommand | typeof UpdateCommand | typeof PutCommand;
    input?: Record<string, unknown>;
    success: Record<string, unknown>;
  };
  act: () => Promise<ApiResponse>;
  status: number;
  envelope: 'v2' | 'legacy';
  /** What a request whose write was never applied still writes of counts: an order create notes its number as a hole. */
  countsAfterFailure?: string[];
};

const HOLE = 'ADD holes :holes, v :one SET #type = :type, changed_at = :now';

const PATHS: WritePath[] = [
  {
    route: 'POST /api/v2/orders/create',
    // One conditional PutItem, in no transaction: it meets only what a single-item write meets.
    conflicts: ITEM_CONFLICTS,
    prepare: () => stubOrderCreate(),
    write: { command: PutCommand, input: ORDER_PUT, success: {} },
    act: () => invoke(createV2, apiEvent('orders-create', { token: TOKENS.live, body: orderBody() })),
    status: 201,
    envelope: 'v2',
    countsAfterFailure: [HOLE],
  },
  {
    route: 'POST /api/orders/create (legacy)',
    conflicts: ITEM_CONFLICTS,
    prepare: () => stubOrderCreate(),
    write: { command: PutCommand, input: ORDER_PUT, success: {} },
    act: () => invoke(createLegacy, apiEvent('orders-create-legacy', { token: TOKENS.live, body: orderBody() })),
    status: 201,
    envelope: 'legacy',
    countsAfterFailure: [HOLE],
  },
  {
    route: 'POST /api/v2/orders/{uuid}/cancel',
    conflicts: ITEM_CONFLICTS,
    prepare: () => undefined,
    write: {
      command: UpdateCommand,
      input: { Key: ORDER_KEY },
      success: { Attributes: storedOrder({ cancelled_at: '2026-03-02T10:00:00.000Z', version: 2 }) },
    },
    act: () => invoke(cancelOrder, apiEvent('orders-cancel', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID } })),
    status: 200,
    envelope: 'v2',
  },
  {
    route: 'PATCH /api/v2/orders/{uuid}',
    conflicts: ITEM_CONFLICTS,
    prepare: () => undefined,
    write: {
      command: UpdateCommand,
      input: { Key: ORDER_KEY },
      success: { Attributes: storedOrder({ total_shipping_value: 995, version: 2 }) },
    },
    act: () =>
      invoke(
        updateOrder,
        apiEvent('orders-update', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID }, body: { total_shipping_value: 995 } }),
      ),
    status: 200,
    envelope: 'v2',
  },
  {
    route: 'POST /api/v2/affiliates/invite',
    conflicts: TRANSACTION_CONFLICTS,
    prepare: () => {
      const userKey = { pk: MERCHANT_PK, sk: 'USER#owner@acme.example' };
      ddbMock
        .on(GetCommand, { Key: userKey })
        .resolves({ Item: { ...userKey, type: 'user', email: 'owner@acme.example', name: 'Olivia' } });
      ddbMock.on(UpdateCommand).resolves({});
      ddbMock.on(UpdateCommand, { Key: { pk: MERCHANT_PK, sk: 'COUNTER#invites' } }).resolves({ Attributes: { seq: 9 } });
    },
    write: { command: TransactWriteCommand, success: {} },
    act: () =>
      invoke(
        createInvite,
        apiEvent('invites-create', {
          token: TOKENS.live,
          body: { email: 'erin@example.com', sender_email: 'owner@acme.example', content: 'Join us' },
        }),
      ),
    status: 200,
    envelope: 'v2',
  },
  {
    route: 'POST /api/v2/affiliate-requests/{uuid}/accept',
    conflicts: TRANSACTION_CONFLICTS,
    prepare: () => {
      ddbMock.on(GetCommand, { Key: REQUEST_KEY }).resolves({ Item: pendingRequest });
      ddbMock.on(UpdateCommand).resolves({});
      ddbMock.on(UpdateCommand, { Key: { pk: MERCHANT_PK, sk: 'COUNTER#affiliates' } }).resolves({ Attributes: { seq: 3 } });
    },
    write: { command: TransactWriteCommand, success: {} },
    act: () => invoke(acceptRequest, apiEvent('affiliate-requests-accept', { token: TOKENS.live, pathParameters: { uuid: REQUEST_UUID } })),
    status: 200,
    envelope: 'v2',
  },
  {
    route: 'POST /api/v2/affiliate-requests/{uuid}/decline',
    conflicts: ITEM_CONFLICTS,
    prepare: () => ddbMock.on(UpdateCommand).resolves({}),
    write: {
      command: UpdateCommand,
      input: { Key: REQUEST_KEY, ReturnValues: 'ALL_NEW' },
      success: { Attributes: { ...pendingRequest, status: 'declined', decided_at: '2026-03-02T10:00:00.000Z' } },
    },
    act: () =>
      invoke(declineRequest, apiEvent('affiliate-requests-decline', { token: TOKENS.live, pathParameters: { uuid: REQUEST_UUID } })),
    status: 200,
    envelope: 'v2',
  },
];

/** When (fake clock) each attempt of the conflicting write was made. */
let attempts: number[] = [];

/** The write throws `conflict` on its first `times` attempts (every attempt when undefined), then succeeds. */
const conflictOn = (path: WritePath, conflict: Conflict, times?: number) => {
  attempts = [];
  // Only the input matcher and the fake are used: the command's own input type does not matter here.
  const command = path.write.command as typeof UpdateCommand;
  const behaviour = path.write.input ? ddbMock.on(command, path.write.input) : ddbMock.on(command);
  behaviour.callsFake(async () => {
    attempts.push(Date.now());
    if (times === undefined || attempts.length <= times) throw conflict();
    return path.write.success;
  });
};

/** Runs the request while the fake clock lets every back-off elapse. */
const actThroughBackOff = async (path: WritePath) => {
  const pending = path.act();
  await vi.advanceTimersByTimeAsync(10_000);
  return pending;
};

const countWrites = () => ddbMock.commandCalls(UpdateCommand).filter((call) => call.args[0].input.Key?.pk === COUNTS_PK);

beforeEach(() => {
  resetAwsMocks();
  sesMock.reset();
  stubAuth();
  sesMock.on(SendEmailCommand).resolves({ MessageId: 'e-1' });
  vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
  vi.setSystemTime(new Date('2026-03-02T10:00:00.000Z'));
  // Jitter at its middle, so the back-off is deterministic: 10 ms, 20 ms, 40 ms, ...
  vi.spyOn(Math, 'random').mockReturnValue(0.5);
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe.each(PATHS)('$route', (path) => {
  describe.each(path.conflicts)('meeting %s', (_kind, conflict) => {
    it('retries with growing back-off and succeeds once it has passed', async () => {
      // Prepare
      path.prepare();
      conflictOn(path, conflict, 2);

      // Act
      const response = await actThroughBackOff(path);

      // Assess
      expect(response.statusCode).toBe(path.status);
      expect(response.body.success).toBe(true);
      expect(attempts).toHaveLength(3);
      const waits = attempts.slice(1).map((at, index) => at - (attempts[index] as number));
      expect(waits[0]).toBeGreaterThan(0);
      expect(waits[1]).toBeGreaterThan(waits[0] as number);
    });

    it(`answers 503 with Retry-After in the route's envelope after ${WRITE_ATTEMPTS} attempts, never a 500, and does nothing that follows a commit`, async () => {
      // Prepare
      path.prepare();
      conflictOn(path, conflict);

      // Act
      const response = await actThroughBackOff(path);

      // Assess
      expectBusy(response, path.envelope);
      expect(attempts).toHaveLength(WRITE_ATTEMPTS);
      expect(countWrites().map((call) => call.args[0].input.UpdateExpression)).toEqual(path.countsAfterFailure ?? []);
      expect(sqsMock).not.toHaveReceivedAnyCommand();
      expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
    });
  });
});

describe.each(PATHS)('$route', (path) => {
  describe.each(UNAVAILABLE)('meeting %s', (_kind, failure) => {
    it("answers 503 with Retry-After in the route's envelope after its one attempt, never a 500, and does nothing that follows a commit", async () => {
      // Prepare
      path.prepare();
      conflictOn(path, failure);

      // Act
      const response = await actThroughBackOff(path);

      // Assess
      expectBusy(response, path.envelope);
      expect(attempts).toHaveLength(1);
      expect(countWrites().map((call) => call.args[0].input.UpdateExpression)).toEqual(path.countsAfterFailure ?? []);
      expect(sqsMock).not.toHaveReceivedAnyCommand();
      expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
    });
  });
});

describe('a throttled order create', () => {
  it('puts the same order again, under the uuid derived from its order_no and with the sequence number it took once', async () => {
    // Prepare
    stubOrderCreate({ seq: 77 });
    conflictOn(PATHS[0] as WritePath, throttling, 1);

    // Act
    const response = await actThroughBackOff(PATHS[0] as WritePath);

    // Assess
    expect(response.statusCode).toBe(201);
    const [first, second] = orderPuts().map((call) => call.args[0].input);
    expect(second).toEqual(first);
    expect(first?.Item).toMatchObject({ uuid: derivedOrderUuid('A-1001'), seq: 77 });
    expect(response.body.data.order.uuid).toBe(derivedOrderUuid('A-1001'));
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(ddbMock.commandCalls(UpdateCommand, { Key: ORDER_SEQUENCE_KEY })).toHaveLength(1);
    // Its block derives its count from the sequence: nothing to count twice.
    expect(countWrites()).toHaveLength(0);
  });
});
