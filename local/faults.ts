import * as DynamoDB from '@aws-sdk/client-dynamodb';
import {
  ProvisionedThroughputExceededException,
  ThrottlingException,
  TransactionCanceledException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import * as SES from '@aws-sdk/client-ses';
import * as SQS from '@aws-sdk/client-sqs';
import { ServiceException } from '@smithy/core/client';
import type { DeserializeMiddleware, MetadataBearer } from '@smithy/types';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { type AwsService, onClientCreated } from '#shared/aws-clients';
import { FUNCTION_CLIENT_CONFIG } from '#shared/sdk-timeouts';
import type { SdkClient } from '#shared/tracing';
import { currentFaultRules, stopCurrentInvocation } from './invocation-scope';
import { answerStack } from './stage-hooks';

/** Faults in the shapes AWS sends, which the emulators never produce, per SDK attempt: docs/correctness.md#faults-on-demand. */

const FAULTS = ['throttle', 'conflict', 'lost', 'refuse', 'unavailable', 'hang', 'stop'] as const;
export type Fault = (typeof FAULTS)[number];

export type FaultRule = {
  /** As written, for messages and the tally. */
  text: string;
  service: AwsService;
  /** An operation name, `write`, or undefined for every operation. */
  operation?: string;
  fault: Fault;
  probability: number;
  /** How many more times the rule may fire (Infinity without `xN`). */
  remaining: number;
  /** How many more matching calls pass before the rule may fire (`+N`; absent: none). */
  skip?: number;
};

export class FaultSpecError extends Error {
  override name = 'FaultSpecError';
}

const parseProbability = (text: string, rule: string): number => {
  const percent = text.endsWith('%');
  const value = Number(percent ? text.slice(0, -1) : text);
  const probability = percent ? value / 100 : value;
  if (text === '' || !Number.isFinite(probability) || probability < 0 || probability > 1)
    throw new FaultSpecError(`Fault rule "${rule}": the probability must be between 0 and 1 (or 0% and 100%), got "${text}"`);
  return probability;
};

/** Each service's operations, as its SDK client names its commands: a rule for another can never fire. */
const operationsOf = (client: object) =>
  Object.keys(client)
    .filter((name) => name.endsWith('Command') && name !== 'Command')
    .map((name) => name.slice(0, -'Command'.length));
const OPERATIONS: Record<AwsService, readonly string[]> = {
  dynamodb: operationsOf(DynamoDB),
  sqs: operationsOf(SQS),
  ses: operationsOf(SES),
};

const checkOperation = (service: AwsService, operation: string | undefined, rule: string) => {
  if (operation === undefined || operation === 'write' || OPERATIONS[service].includes(operation)) return;
  const spelled = OPERATIONS[service].find((known) => known.toLowerCase() === operation.toLowerCase());
  throw new FaultSpecError(
    `Fault rule "${rule}": ${service} has no operation "${operation}"${spelled ? ` (did you mean ${spelled}?)` : ''}; name one as its SDK command is named without "Command", or "write"`,
  );
};

/** Parses a SPEC (see above); `none` or an empty string is no rule. Throws FaultSpecError naming the bad rule. */
export const parseFaultSpec = (spec: string): FaultRule[] => {
  const trimmed = spec.trim();
  if (trimmed === '' || trimmed === 'none') return [];
  return trimmed.split(',').map((raw) => {
    const text = raw.trim();
    const match = text.match(/^([a-z]+)(?:\.([A-Za-z]+))?:([a-z]+)(?:=([0-9.]+%?))?(?:x(\d+))?(?:\+(\d+))?$/);
    if (!match) throw new FaultSpecError(`Fault rule "${text}" is not target:fault=probability (example: dynamodb.write:lost=2%)`);
    const [, serviceName, operation, faultName, probability, count, skip] = match;
    const services = Object.keys(OPERATIONS) as AwsService[];
    const service = services.find((known) => known === serviceName);
    if (!service) throw new FaultSpecError(`Fault rule "${text}": unknown service "${serviceName}" (one of ${services.join(', ')})`);
    const fault = FAULTS.find((known) => known === faultName);
    if (!fault) throw new FaultSpecError(`Fault rule "${text}": unknown fault "${faultName}" (one of ${FAULTS.join(', ')})`);
    checkOperation(service, operation, text);
    return {
      text,
      service,
      operation,
      fault,
      probability: probability === undefined ? 1 : parseProbability(probability, text),
      remaining: count === undefined ? Number.POSITIVE_INFINITY : Number(count),
      ...(skip === undefined ? {} : { skip: Number(skip) }),
    };
  });
};

/** Operations that only read; every other operation of a service counts as a write. */
const READ_OPERATION = /^(Get|BatchGet|TransactGet|Query|Scan|Describe|List|Receive)/;

const matches = (rule: FaultRule, service: AwsService, operation: string) =>
  rule.service === service &&
  (rule.operation === undefined || rule.operation === operation || (rule.operation === 'write' && !READ_OPERATION.test(operation)));

/** A small seeded PRNG (mulberry32), so a run with FAULTS_SEED repeats its faults. */
export const seededRandom = (seed: number) => {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

const metadata = (attempts = 1) => ({ httpStatusCode: 400, requestId: `fault-${Math.random().toString(36).slice(2, 10)}`, attempts });

const timeoutError = (ms: number) =>
  Object.assign(new Error(`Request did not complete within ${ms} ms (injected fault)`), { name: 'TimeoutError' });

/** The cancellation reasons of a transaction of `parts` items, `code` on one of them, None on the others. */
const cancellation = (parts: number, code: string) => {
  const failing = Math.floor(Math.random() * parts);
  const reasons = Array.from({ length: parts }, (_, index) =>
    index === failing ? { Code: code, Message: `${code} (injected fault)` } : { Code: 'None' },
  );
  return new TransactionCanceledException({
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((reason) => reason.Code).join(', ')}]`,
    $metadata: metadata(),
    CancellationReasons: reasons,
  });
};

const transactionParts = (input: object) =>
  'TransactItems' in input && Array.isArray(input.TransactItems) ? input.TransactItems.length : 1;

/** The error AWS answers for `fault` on `operation` of `service` (for the faults that are answers). */
const serviceError = (service: AwsService, operation: string, fault: 'throttle' | 'conflict' | 'unavailable', input: object): Error => {
  const coin = Math.random() < 0.5;
  if (fault === 'unavailable')
    return new ServiceException({
      name: service === 'dynamodb' ? 'InternalServerError' : 'ServiceUnavailable',
      $fault: 'server',
      $metadata: { ...metadata(), httpStatusCode: service === 'dynamodb' ? 500 : 503 },
      message: 'Service unavailable (injected fault)',
    });
  if (service === 'dynamodb') {
    if (operation === 'TransactWriteItems')
      return cancellation(
        transactionParts(input),
        fault === 'conflict' ? 'TransactionConflict' : coin ? 'ThrottlingError' : 'ProvisionedThroughputExceeded',
      );
    if (fault === 'conflict')
      return new TransactionConflictException({ message: 'Transaction is ongoing for the item (injected fault)', $metadata: metadata() });
    return coin
      ? new ProvisionedThroughputExceededException({
          message: 'The level of configured provisioned throughput for the table was exceeded (injected fault)',
          $metadata: metadata(),
        })
      : new ThrottlingException({
          message: 'Throughput exceeds the current capacity of your table or index (injected fault)',
          $metadata: metadata(),
        });
  }
  // SQS and SES have no transactions: a conflict there is as good as throttling.
  return new ServiceException({
    name: service === 'sqs' ? 'RequestThrottled' : 'Throttling',
    $fault: 'client',
    $metadata: metadata(),
    message: 'Rate exceeded (injected fault)',
  });
};

const connectionRefused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1 (injected fault)'), { code: 'ECONNREFUSED', errno: -111, syscall: 'connect' });

/** This process's rules (used when the invocation brings none of its own) and how often each fired, by its text. */
export const createInjector = (spec: string, seed?: number) => ({
  rules: parseFaultSpec(spec),
  tally: new Map<string, number>(),
  random: seed === undefined ? Math.random : seededRandom(seed),
});

/** Adds the fault middleware below the retries and above the deserializer; `rulesOf` may give the invocation's own rules. */
export const injectFaults = (
  client: SdkClient,
  service: AwsService,
  injector: ReturnType<typeof createInjector>,
  options: { requestTimeoutMs: number; rulesOf?: () => FaultRule[] | undefined },
): void => {
  const middleware: DeserializeMiddleware<object, MetadataBearer> = (next, context) => async (args) => {
    const operation = (context.commandName ?? '').replace(/Command$/, '');
    const rules = options.rulesOf?.() ?? injector.rules;
    const rule = rules.find((candidate) => {
      if (!matches(candidate, service, operation) || candidate.remaining <= 0) return false;
      if (candidate.skip !== undefined && candidate.skip > 0) {
        candidate.skip -= 1;
        return false;
      }
      return injector.random() < candidate.probability;
    });
    if (!rule) return next(args);
    rule.remaining -= 1;
    injector.tally.set(rule.text, (injector.tally.get(rule.text) ?? 0) + 1);
    switch (rule.fault) {
      case 'throttle':
      case 'conflict':
      case 'unavailable':
        throw serviceError(service, operation, rule.fault, args.input);
      case 'refuse':
        throw connectionRefused();
      case 'hang':
        await new Promise((resolve) => setTimeout(resolve, options.requestTimeoutMs));
        throw timeoutError(options.requestTimeoutMs);
      case 'lost':
        // The answer is lost whatever it was: an applied write, or a refusal (a retry of one).
        await next(args).catch(() => undefined);
        throw timeoutError(options.requestTimeoutMs);
      case 'stop':
        await next(args);
        // Never settles: like a Lambda whose environment died, nothing after this call runs.
        if (stopCurrentInvocation(`${service}.${operation} applied, then the function stopped (injected fault)`))
          return new Promise<never>(() => undefined);
        throw timeoutError(options.requestTimeoutMs);
    }
  };
  client.middlewareStack.add(middleware, { step: 'deserialize', priority: 'high', name: 'localFaultInjection' });
};

/** The header a request of a test may carry to bring its own rules (only when the stack allows it). */
const FAULTS_HEADER = 'x-local-faults';

/** What the local stack asks a stage process for how often each fault rule fired. */
export const FAULT_TALLY_REQUEST = 'fault-tally';

/**
 * The faults of this stage process: LOCAL_FAULTS (a SPEC), LOCAL_FAULTS_SEED and LOCAL_FAULTS_HEADER=on
 * (a request may bring its own rules in the x-local-faults header), on every client the functions build from now on.
 */
export const faultsFromEnv = (env = process.env) => {
  const seed = env.LOCAL_FAULTS_SEED ? Number(env.LOCAL_FAULTS_SEED) : undefined;
  const injector = createInjector(env.LOCAL_FAULTS ?? '', seed);
  const headerAllowed = env.LOCAL_FAULTS_HEADER === 'on';
  if (injector.rules.length > 0 || headerAllowed) {
    onClientCreated((client, service) =>
      injectFaults(client, service, injector, {
        requestTimeoutMs: FUNCTION_CLIENT_CONFIG[service].requestHandler.requestTimeout,
        rulesOf: currentFaultRules,
      }),
    );
  }
  answerStack(FAULT_TALLY_REQUEST, () => Object.fromEntries(injector.tally));
  return {
    /** The request's own rules (removing the header from the event), a FaultSpecError, or undefined. */
    takeRequestRules: (event: APIGatewayProxyEvent): FaultRule[] | FaultSpecError | undefined => {
      const name = Object.keys(event.headers ?? {}).find((header) => header.toLowerCase() === FAULTS_HEADER);
      if (!name || !headerAllowed) return undefined;
      const spec = event.headers[name] ?? '';
      delete event.headers[name];
      if (event.multiValueHeaders) delete event.multiValueHeaders[name];
      try {
        return parseFaultSpec(spec);
      } catch (error) {
        if (error instanceof FaultSpecError) return error;
        throw error;
      }
    },
  };
};

/** The answer to a request whose x-local-faults header does not parse. */
export const faultSpecRefused = (error: FaultSpecError): APIGatewayProxyResult => ({
  statusCode: 400,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ message: error.message }),
});
