import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from 'aws-lambda';

/**
 * One local process runs many handlers at once (every route of a stage, the relays, the commission
 * consumer), all sharing the Powertools Logger singleton of shared/logger.ts. Lambda runs one
 * invocation per environment, so the logger keeps the Lambda context on its instance: locally, a
 * commission batch would log under the name of whatever request started last
 * (`orders-create-legacy`). Lambda's concurrent mode (AWS_LAMBDA_MAX_CONCURRENCY, managed
 * instances) instead keeps per-invocation state in an InvokeStore backed by AsyncLocalStorage,
 * which Powertools reads; this is that store, and every local invocation runs in its own scope.
 */

type Store = Record<string | symbol, unknown>;

const REQUEST_ID = Symbol.for('_AWS_LAMBDA_REQUEST_ID');
const X_RAY_TRACE_ID = Symbol.for('_AWS_LAMBDA_X_RAY_TRACE_ID');
const TENANT_ID = Symbol.for('_AWS_LAMBDA_TENANT_ID');

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

/** Runs one invocation in its own scope (a no-op wrapper until enableInvocationScopes). */
export const invokeScoped = <T>(context: Pick<Context, 'awsRequestId'>, fn: () => Promise<T>): Promise<T> =>
  store ? store.run({ [REQUEST_ID]: context.awsRequestId }, fn) : fn();
