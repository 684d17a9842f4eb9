import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from 'aws-lambda';
import type { FaultRule } from './faults';

/** The per-invocation store Lambda's concurrent mode keeps and Powertools reads (docs/architecture.md#local-shape-npm-start). */

type Store = Record<string | symbol, unknown>;

const REQUEST_ID = Symbol.for('_AWS_LAMBDA_REQUEST_ID');
const X_RAY_TRACE_ID = Symbol.for('_AWS_LAMBDA_X_RAY_TRACE_ID');
const TENANT_ID = Symbol.for('_AWS_LAMBDA_TENANT_ID');
/** Local only: ends the invocation as if its environment died (the `stop` fault, local/faults.ts). */
const STOP = Symbol('localStopInvocation');
/** Local only: the fault rules a test's request brought for this invocation. */
const FAULT_RULES = Symbol('localFaultRules');

class LocalInvokeStore {
  readonly #als = new AsyncLocalStorage<Store>();
  getContext = () => this.#als.getStore();
  hasContext = () => this.#als.getStore() !== undefined;
  get = <T>(key: string | symbol) => this.#als.getStore()?.[key] as T | undefined;
  set = (key: string | symbol, value: unknown) => {
    const store = this.#als.getStore();
    if (!store) throw new Error('No context available');
    store[key] = value;
  };
  run = <T>(context: Store, fn: () => T): T => this.#als.run(context, fn);
  getRequestId = () => this.get<string>(REQUEST_ID) ?? '-';
  getXRayTraceId = () => this.get<string>(X_RAY_TRACE_ID);
  getTenantId = () => this.get<string>(TENANT_ID);
  getTraceparent = () => undefined;
  getTracestate = () => undefined;
  getBaggage = () => undefined;
}

type WithAwsLambda = { awslambda?: { InvokeStore?: unknown } };

let store: LocalInvokeStore | undefined;

/** Turns on per-invocation state for this process; call before the handlers are imported. */
export const enableInvocationScopes = () => {
  process.env.AWS_LAMBDA_MAX_CONCURRENCY ??= '64';
  const global = globalThis as WithAwsLambda;
  global.awslambda ??= {};
  if (!(global.awslambda.InvokeStore instanceof LocalInvokeStore)) global.awslambda.InvokeStore = new LocalInvokeStore();
  store = global.awslambda.InvokeStore as LocalInvokeStore;
};

/** An invocation ended by the `stop` fault: API Gateway answers such a crash with 502. */
export class InvocationStopped extends Error {
  override name = 'InvocationStopped';
}

/** One invocation that ended: its function, how long it ran (ms, performance.now()) and whether it succeeded. */
export type EndedInvocation = { invocation: string; functionName: string; ms: number; ok: boolean };

/** Told when each invocation starts and ends: what a stage hook (local/stage-hooks.ts) sets to watch them, as the bench's invocation recorder does. */
export type InvocationObserver = { started: (invocation: string) => void; ended: (ended: EndedInvocation) => void };

let observer: InvocationObserver | undefined;

/** Sets (or, with undefined, removes) the one observer of the invocations that start from now on. */
export const observeInvocations = (next: InvocationObserver | undefined) => {
  observer = next;
};

/** Runs one invocation in its own scope with its own fault rules; a stopped one rejects with InvocationStopped and never resumes. */
export const invokeScoped = <T>(
  context: Pick<Context, 'awsRequestId'> & Partial<Pick<Context, 'functionName'>>,
  fn: () => Promise<T>,
  faultRules?: FaultRule[],
): Promise<T> => {
  if (!store) return fn();
  const watching = observer;
  const startedAt = performance.now();
  const end = (ok: boolean) =>
    watching?.ended({ invocation: context.awsRequestId, functionName: context.functionName ?? '?', ms: performance.now() - startedAt, ok });
  watching?.started(context.awsRequestId);
  let stop: (reason: string) => void = () => undefined;
  const stopped = new Promise<never>((_, reject) => {
    stop = (reason) => reject(new InvocationStopped(reason));
  });
  // An invocation ends once, whether it settles or is stopped first.
  return Promise.race([store.run({ [REQUEST_ID]: context.awsRequestId, [STOP]: stop, [FAULT_RULES]: faultRules }, fn), stopped]).then(
    (value) => {
      end(true);
      return value;
    },
    (error: unknown) => {
      end(false);
      throw error;
    },
  );
};

/** The invocation the caller runs in (its awsRequestId), if any. */
export const currentInvocation = (): string | undefined => (store?.hasContext() ? store.getRequestId() : undefined);

/** Stops the current invocation (see invokeScoped); false when there is none to stop. */
export const stopCurrentInvocation = (reason: string): boolean => {
  const stop = store?.get<(reason: string) => void>(STOP);
  stop?.(reason);
  return stop !== undefined;
};

/** The current invocation's own fault rules, as invokeScoped was given them. */
export const currentFaultRules = (): FaultRule[] | undefined => store?.get<FaultRule[]>(FAULT_RULES);
