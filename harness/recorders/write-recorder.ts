import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import type { InitializeMiddleware, MetadataBearer } from '@smithy/types';
import { currentInvocation } from '#local/invocation-scope';
import type { LocalStack } from '#local/stack';
import { answerStack, STAGE_HOOKS_ENV } from '#local/stage-hooks';
import { type AwsService, onClientCreated } from '#shared/aws-clients';
import type { Stage } from '#shared/config';
import { GLOBAL_INDEXES, type IndexName } from '#shared/db/table-def';
import { logger } from '#shared/logger';
import { type InvocationRecord, RECORD_LOGS_ENV, recordInvocations } from './invocation-recorder';

/** A local stage hook recording every AWS call of the functions (docs/data-model-heat.md#how-it-is-measured); never in Lambda. */

const WRITE_RECORD_REQUEST = 'write-record';
const INDEXES = GLOBAL_INDEXES.map((gsi) => gsi.indexName);
/** Indexes that project every attribute: any change of an item on them rewrites its entry there. */
const ALL_PROJECTION = GLOBAL_INDEXES.filter((gsi) => gsi.projection === 'ALL').map((gsi): IndexName => gsi.indexName);
type Where = 'table' | IndexName;

/** One partition written by one item write. */
export type PartitionWrite = {
  where: Where;
  /** The partition key value (`?` when the item's index key is not known to this process). */
  key: string;
  /** The item's sort key (table writes only): the item inside the partition. */
  sk?: string;
  /** Write units: measured (the call's ConsumedCapacity, shared out by item size) or estimated. */
  wcu: number;
};

export type CallRecord = {
  service: AwsService;
  operation: string;
  /** The function (its Lambda context's name) or `(outside an invocation)`. */
  fn: string;
  /** The invocation (awsRequestId). */
  invocation: string;
  /** Round trips: 1 + the SDK's retries. */
  attempts: number;
  ok: boolean;
  /** DynamoDB writes: one entry per partition reached. */
  writes?: PartitionWrite[];
  /** DynamoDB: units from the call's ConsumedCapacity (true) or estimated (false). */
  measured?: boolean;
  wcu?: number;
  rcu?: number;
  /** DynamoDB reads: the partitions read (`gsi1:M#…`, `table:M#…`). */
  reads?: string[];
  /** A GetItem's or Query's key as read, and whether strongly consistent. */
  readItem?: string;
  consistent?: boolean;
  /** SQS and SES: messages sent. */
  messages?: number;
  /** SQS sends: the payload's bytes. */
  bytes?: number;
  /** When the call started and ended (performance.now() of the stage process). */
  span?: [number, number];
};

type Attrs = Record<string, unknown>;
/** An SQS message as a send gives it. */
type Message = {
  MessageBody?: string;
  MessageAttributes?: Record<string, { DataType?: string; StringValue?: string; BinaryValue?: Uint8Array }>;
};
/** The parts of a command's input the recorder reads, whichever command it is. */
type Input = Message & {
  Item?: Attrs;
  Key?: Attrs;
  UpdateExpression?: string;
  KeyConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Attrs;
  IndexName?: string;
  ConsistentRead?: boolean;
  ReturnConsumedCapacity?: string;
  TransactItems?: { Put?: { Item?: Attrs }; Update?: Input; Delete?: { Key?: Attrs }; Get?: { Key?: Attrs } }[];
  /** BatchWriteItem's requests per table, or BatchGetItem's keys per table. */
  RequestItems?: Record<string, { PutRequest?: { Item?: Attrs }; DeleteRequest?: { Key?: Attrs } }[] | { Keys?: Attrs[] }>;
  /** SendMessageBatch's messages. */
  Entries?: Message[];
};

/** A key's value as text: the document client's plain string or number, or the low-level client's `{ S }` or `{ N }`. */
const str = (value: unknown): string | undefined => {
  const { S, N } = (value !== null && typeof value === 'object' ? value : {}) as { S?: unknown; N?: unknown };
  const inner = S ?? N ?? value;
  return typeof inner === 'string' || typeof inner === 'number' ? String(inner) : undefined;
};

/** DynamoDB's item size rule, near enough: attribute names plus values, as UTF-8 (numbers ~ their digits). */
const sizeOf = (value: unknown): number => {
  if (value === null || value === undefined) return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number' || typeof value === 'bigint') return String(value).length;
  if (typeof value === 'boolean') return 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, item) => sum + 1 + sizeOf(item), 0);
  if (value instanceof Set) return [...value].reduce((sum: number, item) => sum + sizeOf(item), 0);
  if (typeof value === 'object')
    return 3 + Object.entries(value as Attrs).reduce((sum, [name, item]) => sum + Buffer.byteLength(name) + sizeOf(item), 0);
  return 1;
};
const kb = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

// What this process knows of each item: its index keys and size, from the writes it saw.
type Known = { index: Partial<Record<IndexName, string>>; bytes: number };
const known = new Map<string, Known>();
const itemId = (key: Attrs) => `${str(key.pk)}\u0000${str(key.sk)}`;

type ItemWrite = {
  pk: string;
  sk: string;
  bytes: number;
  /** Index partitions written (new key, or the same key rewritten) and removed (old key). */
  index: { where: IndexName; key: string; removed?: boolean }[];
  after: Known | undefined;
};

/** An item's write: the index partitions it leaves (an old key) and is written on (a new key, or a kept one `rewrites` names). */
const itemWrite = (
  key: Attrs,
  before: Known | undefined,
  after: Known | undefined,
  rewrites: (where: IndexName) => boolean,
): ItemWrite => ({
  pk: str(key.pk) ?? '?',
  sk: str(key.sk) ?? '?',
  bytes: after?.bytes ?? before?.bytes ?? sizeOf(key),
  index: INDEXES.flatMap((where) => {
    const was = before?.index[where];
    const now = after?.index[where];
    return [
      ...(was !== undefined && was !== now ? [{ where, key: was, removed: true }] : []),
      ...(now !== undefined && (now !== was || rewrites(where)) ? [{ where, key: now }] : []),
    ];
  }),
  after,
});

const putWrite = (item: Attrs): ItemWrite => {
  const index: Known['index'] = {};
  for (const where of INDEXES) {
    const now = str(item[`${where}pk`]);
    if (now !== undefined) index[where] = now;
  }
  return itemWrite(item, known.get(itemId(item)), { index, bytes: sizeOf(item) }, () => true);
};

/** Top-level comma split (if_not_exists(a, b) keeps its comma). */
const splitTop = (text: string): string[] => {
  let depth = 0;
  const parts = [''];
  for (const char of text) {
    depth += char === '(' ? 1 : char === ')' ? -1 : 0;
    if (char === ',' && depth === 0) parts.push('');
    else parts[parts.length - 1] += char;
  }
  return parts.map((part) => part.trim()).filter(Boolean);
};

/** The comma-separated actions of an UpdateExpression's SET or REMOVE clauses. */
const actionsOf = (expression: string, clause: 'SET' | 'REMOVE'): string[] => {
  const parts = expression.split(/\b(SET|REMOVE|ADD|DELETE)\b/i);
  return parts.flatMap((part, index) => (index % 2 === 1 && part.toUpperCase() === clause ? splitTop(parts[index + 1] ?? '') : []));
};

const updateWrite = (update: Input): ItemWrite => {
  const key = update.Key ?? {};
  const names = update.ExpressionAttributeNames ?? {};
  const values = update.ExpressionAttributeValues ?? {};
  const resolveName = (path: string) => names[path.trim()] ?? path.trim();
  const before = known.get(itemId(key));
  const after: Known = { index: { ...before?.index }, bytes: Math.max(before?.bytes ?? 0, sizeOf(key) + sizeOf(values)) };
  const changed = new Map<IndexName, string | undefined>();
  for (const action of actionsOf(update.UpdateExpression ?? '', 'SET')) {
    const [path, value = ''] = action.split(/=(.*)/s).map((part) => part.trim());
    const attribute = resolveName(path ?? '');
    const where = INDEXES.find((name) => `${name}pk` === attribute);
    if (!where) continue;
    const placeholder = value.match(/:[A-Za-z0-9_]+/)?.[0];
    changed.set(where, str(placeholder ? values[placeholder] : undefined) ?? '?');
  }
  for (const path of actionsOf(update.UpdateExpression ?? '', 'REMOVE')) {
    const where = INDEXES.find((name) => `${name}pk` === resolveName(path));
    if (where) changed.set(where, undefined);
  }
  for (const [where, now] of changed) {
    if (now === undefined) delete after.index[where];
    else after.index[where] = now;
  }
  return itemWrite(key, before, after, (where) => changed.has(where) || ALL_PROJECTION.includes(where));
};

const deleteWrite = (key: Attrs): ItemWrite => itemWrite(key, known.get(itemId(key)), undefined, () => true);

type WritePart = NonNullable<Input['TransactItems']>[number];

/** The items a write call writes, part by part (ConditionCheck parts write nothing, but a transaction pays for them). */
const itemWrites = (operation: string, input: Input): ItemWrite[] => {
  const single: Record<string, WritePart> = { PutItem: { Put: input }, UpdateItem: { Update: input }, DeleteItem: { Delete: input } };
  const parts: WritePart[] =
    operation === 'TransactWriteItems'
      ? (input.TransactItems ?? [])
      : operation === 'BatchWriteItem'
        ? Object.values(input.RequestItems ?? {}).flatMap((requests) =>
            (Array.isArray(requests) ? requests : []).map((request) => ({ Put: request.PutRequest, Delete: request.DeleteRequest })),
          )
        : [single[operation] ?? {}];
  return parts.flatMap((part) => {
    if (part.Put) return [putWrite(part.Put.Item ?? {})];
    if (part.Update) return [updateWrite(part.Update)];
    if (part.Delete) return [deleteWrite(part.Delete.Key ?? {})];
    return [];
  });
};

/** The partitions a read reads (a Query's: its key condition's first equality) and a GetItem's item or a Query's key condition, as read. */
const readFigures = (operation: string, input: Input): Pick<CallRecord, 'reads' | 'readItem' | 'consistent'> => {
  const consistent = input.ConsistentRead === true;
  const values = input.ExpressionAttributeValues ?? {};
  if (operation === 'GetItem') {
    const pk = str(input.Key?.pk) ?? '?';
    return { reads: [`table:${pk}`], readItem: `${pk} / ${str(input.Key?.sk) ?? '?'}`, consistent };
  }
  if (operation === 'Query') {
    const names = input.ExpressionAttributeNames ?? {};
    const match = (input.KeyConditionExpression ?? '').match(/([#A-Za-z0-9_]+)\s*=\s*(:[A-Za-z0-9_]+)/);
    const where = input.IndexName ?? 'table';
    const attribute = match ? (names[match[1] ?? ''] ?? match[1]) : '?';
    const keyName = attribute === `${where === 'table' ? '' : where}pk` || attribute === 'pk' ? '' : `${attribute}=`;
    const readItem = `${where}: ${Object.values(values)
      .map((value) => str(value) ?? '?')
      .join(', ')}`;
    return { reads: [`${where}:${keyName}${str(values[match?.[2] ?? '']) ?? '?'}`], readItem, consistent };
  }
  if (operation === 'BatchGetItem')
    return {
      reads: Object.values(input.RequestItems ?? {}).flatMap((request) =>
        (Array.isArray(request) ? [] : (request.Keys ?? [])).map((key) => `table:${str(key.pk) ?? '?'}`),
      ),
    };
  if (operation === 'TransactGetItems')
    return { reads: (input.TransactItems ?? []).map((part) => `table:${str(part.Get?.Key?.pk) ?? '?'}`) };
  return { reads: [] };
};

const units = (capacity: ConsumedCapacity[]) => {
  const byWhere: Partial<Record<Where, number>> = {};
  let total = 0;
  for (const entry of capacity) {
    total += entry.CapacityUnits ?? 0;
    if (entry.Table?.CapacityUnits !== undefined) byWhere.table = (byWhere.table ?? 0) + entry.Table.CapacityUnits;
    for (const [name, index] of Object.entries(entry.GlobalSecondaryIndexes ?? {})) {
      const where = INDEXES.find((gsi) => gsi === name);
      if (where) byWhere[where] = (byWhere[where] ?? 0) + (index.CapacityUnits ?? 0);
    }
  }
  return { total, byWhere };
};

/** Partition writes of a call, with units measured (shared out by size) or estimated. */
const partitionWrites = (
  writes: ItemWrite[],
  transaction: boolean,
  measured: Partial<Record<Where, number>> | undefined,
): PartitionWrite[] => {
  const entries = writes.flatMap((write) => [
    { where: 'table' as Where, key: write.pk, sk: write.sk, bytes: write.bytes },
    // An index entry removed, or a KEYS_ONLY one, costs 1 unit; a written ALL one the item's size.
    ...write.index.map(({ where, key, removed }) => ({ where, key, bytes: removed || !ALL_PROJECTION.includes(where) ? 1 : write.bytes })),
  ]);
  if (!measured) return entries.map(({ bytes, ...entry }) => ({ ...entry, wcu: kb(bytes) * (transaction ? 2 : 1) }));
  // Where no units are named, nothing was written (e.g. an attribute not projected); units named where no write is known go to `?`.
  const wheres: Where[] = ['table', ...INDEXES];
  const bytesOn = (where: Where) => entries.reduce((sum, entry) => sum + (entry.where === where ? Math.max(1, entry.bytes) : 0), 0);
  return [
    ...entries.flatMap(({ bytes, ...entry }) => {
      const total = measured[entry.where];
      return total === undefined ? [] : [{ ...entry, wcu: (total * Math.max(1, bytes)) / bytesOn(entry.where) }];
    }),
    ...wheres.flatMap((where) =>
      (measured[where] ?? 0) > 0 && bytesOn(where) === 0 ? [{ where, key: '?', wcu: measured[where] ?? 0 }] : [],
    ),
  ];
};

// Which function and invocation a call belongs to.
const FUNCTION_NAME = Symbol('localRecordedFunction');
/** The invocation scope's store (local/invocation-scope.ts), where the function's name is noted beside the invocation. */
type InvokeStore = { get: (key: symbol) => unknown; set: (key: symbol, value: unknown) => void };
const invokeStore = () => (globalThis as { awslambda?: { InvokeStore?: InvokeStore } }).awslambda?.InvokeStore;
const currentFunction = () => {
  const invocation = currentInvocation();
  if (invocation === undefined) return { fn: '(outside an invocation)', invocation: '-' };
  return { fn: String(invokeStore()?.get(FUNCTION_NAME) ?? '(before the logger had its context)'), invocation };
};

/** Every handler gives its Lambda context to the shared logger (injectLambdaContext): note its name in the invocation's scope. */
const noteFunctionNames = () => {
  const original = logger.addContext.bind(logger);
  logger.addContext = (context) => {
    if (currentInvocation() !== undefined) invokeStore()?.set(FUNCTION_NAME, context.functionName);
    original(context);
  };
};

/** What one stage process recorded since it was last asked: every call, and every invocation that ended. */
export type WriteRecord = { records: CallRecord[]; invocations: InvocationRecord[] };

/** A message's payload as SQS measures it: its body plus each attribute's name, type and value. */
const messageBytes = (message: Message) =>
  Buffer.byteLength(message.MessageBody ?? '') +
  Object.entries(message.MessageAttributes ?? {}).reduce(
    (sum, [name, attribute]) =>
      sum + Buffer.byteLength(name + (attribute.DataType ?? '') + (attribute.StringValue ?? '')) + (attribute.BinaryValue?.byteLength ?? 0),
    0,
  );

/** An SQS or SES call's messages (SendMessageBatch counts its entries) and, for SQS sends, their payload's bytes. */
const messageFigures = (service: AwsService, operation: string, input: Input): Partial<CallRecord> => {
  const entries = operation === 'SendMessageBatch' ? (input.Entries ?? []) : operation.startsWith('Send') ? [input] : [];
  const sqsSend = service === 'sqs' && (operation === 'SendMessage' || operation === 'SendMessageBatch');
  return { messages: entries.length, ...(sqsSend ? { bytes: entries.reduce((sum, entry) => sum + messageBytes(entry), 0) } : {}) };
};

/** A DynamoDB call's writes or reads once answered (`capacity` undefined when it failed); `commit` notes its items after a success. */
const dynamoFigures = (operation: string, input: Input) => {
  input.ReturnConsumedCapacity ??= 'INDEXES';
  const writes = itemWrites(operation, input);
  const isWrite = writes.length > 0 || /^(Put|Update|Delete|TransactWrite|BatchWrite)/.test(operation);
  return {
    figures: (capacity: ConsumedCapacity[] | undefined): Partial<CallRecord> => {
      const measured = capacity !== undefined && capacity.length > 0 ? units(capacity) : undefined;
      // A read that failed is estimated at 1 unit.
      if (!isWrite) return { measured: measured !== undefined, ...readFigures(operation, input), rcu: measured ? measured.total : 1 };
      const partitions = partitionWrites(writes, operation === 'TransactWriteItems', measured?.byWhere);
      return {
        measured: measured !== undefined,
        writes: partitions,
        wcu: measured?.total ?? partitions.reduce((sum, entry) => sum + entry.wcu, 0),
      };
    },
    commit: () => {
      for (const write of writes) {
        if (write.after) known.set(itemId(write), write.after);
        else known.delete(itemId(write));
      }
    },
  };
};

/** Records every call of a client into `records`, each with its function, invocation, round trips and figures. */
const recorderMiddleware =
  (service: AwsService, records: CallRecord[]): InitializeMiddleware<object, MetadataBearer> =>
  (next, context) =>
  async (args) => {
    const operation = (context.commandName ?? '').replace(/Command$/, '');
    const input = args.input as Input;
    const caller = currentFunction();
    const startedAt = performance.now();
    const dynamo = service === 'dynamodb' ? dynamoFigures(operation, input) : undefined;
    const record = (ok: boolean, attempts: number | undefined, capacity?: ConsumedCapacity | ConsumedCapacity[]) =>
      records.push({
        service,
        operation,
        ...caller,
        attempts: attempts ?? 1,
        ok,
        span: [startedAt, performance.now()],
        ...(dynamo ? dynamo.figures(capacity === undefined ? undefined : [capacity].flat()) : messageFigures(service, operation, input)),
      });
    try {
      const output = await next(args);
      const result = output.output as MetadataBearer & { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] };
      record(true, result.$metadata?.attempts, result.ConsumedCapacity);
      dynamo?.commit();
      return output;
    } catch (error) {
      // A refused write (its condition failed) still costs its units; the item did not change.
      record(false, (error as MetadataBearer).$metadata?.attempts);
      throw error;
    }
  };

/** The stage hook's entry: records every client the functions build from now on and every invocation, and answers 'write-record'. */
export const install = (env: NodeJS.ProcessEnv) => {
  const records: CallRecord[] = [];
  const invocations = recordInvocations({ quiet: env[RECORD_LOGS_ENV] === 'count' });
  noteFunctionNames();
  onClientCreated((client, service) =>
    client.middlewareStack.add(recorderMiddleware(service, records), { step: 'initialize', priority: 'high', name: 'localWriteRecorder' }),
  );
  answerStack(WRITE_RECORD_REQUEST, (): WriteRecord => ({ records: records.splice(0), invocations: invocations.drain() }));
};

/** The stage processes' environment to record (`startLocalStack({ workerEnv })`); `countLogs` counts lines below ERROR, not shown. */
export const recordingEnv = (options: { countLogs?: boolean } = {}): Record<string, string> => ({
  [STAGE_HOOKS_ENV]: import.meta.filename,
  ...(options.countLogs ? { [RECORD_LOGS_ENV]: 'count' } : {}),
});

/** Every AWS call the functions made and every invocation that ended since the last ask, per stage (empty where none was recorded). */
export const takeWriteRecord = async (stack: Pick<LocalStack, 'ask'>): Promise<Record<Stage, WriteRecord>> => {
  const answers = await stack.ask<WriteRecord>(WRITE_RECORD_REQUEST);
  const empty = (): WriteRecord => ({ records: [], invocations: [] });
  return { live: answers.live ?? empty(), sandbox: answers.sandbox ?? empty() };
};
