import { type Attempt, isRetryable, send } from './client';
import { ARRAY_LISTS, array, createdUuidOf, isKeyed, type Op, record, seenIn, strings } from './ops';
import { createRng, type MerchantModel, planOp, type WorkloadState } from './plan';

/**
 * The mixed workload: C workers draw logical operations from one seeded plan (plan.ts) until
 * `ops` were issued. Each operation picks a merchant, a kind (by weight) and a target the
 * merchant's model says is fit, is sent through the retrying client (client.ts) and records every
 * attempt. An order or request is locked while an operation on it runs, so the final state of
 * each follows from the answers in issue order.
 */

const updateModel = (model: MerchantModel, op: Op, status: Attempt['status'], json: unknown) => {
  if ((op.kind === 'create-v2' || op.kind === 'create-legacy') && status === 201) {
    op.createdUuid = createdUuidOf(json);
    if (op.createdUuid && op.orderNo) model.orders.push({ uuid: op.createdUuid, orderNo: op.orderNo, cancelled: false, cancelSent: false });
  }
  if (op.kind === 'cancel' && status === 200) {
    const order = model.orders.find((candidate) => candidate.uuid === op.orderUuid);
    if (order) order.cancelled = true;
  }
  if ((op.kind === 'accept' || op.kind === 'decline') && status === 200 && op.requestUuid) model.decided.push(op.requestUuid);
  if (op.kind === 'invite' && status === 200 && op.inviteEmail) model.invited.push(op.inviteEmail);
  // A stored answer (2xx-4xx; a 5xx is never stored) can be replayed.
  if (isKeyed(op) && op.kind !== 'replay' && op.kind !== 'probe' && typeof status === 'number' && status < 500 && !isRetryable(status))
    model.keyedDone.push(op);
};

/** Sends one planned operation and records what it was told. */
export const runOp = async (op: Op, model: MerchantModel | undefined) => {
  const response = await send(op.request, op.request.method !== 'GET');
  op.attempts = response.attempts;
  const status = response.last.status;
  if (typeof status === 'number' && status < 300) {
    op.seen = seenIn(response.json);
    const arrayList = ARRAY_LISTS[op.kind];
    if (arrayList) op.seen[arrayList].push(...strings(array(record(response.json).data), 'uuid'));
  }
  if (model) updateModel(model, op, status, response.json);
  return response;
};

export type Progress = (done: number, total: number) => void;

/**
 * Runs the workload: `concurrency` workers until `ops` operations were issued or the deadline
 * passed. Returns every operation, in issue order.
 */
export const runWorkload = async (
  models: MerchantModel[],
  options: { ops: number; concurrency: number; seed: number; deadline: number; plain: boolean },
  progress: Progress,
): Promise<Op[]> => {
  const state: WorkloadState = { models, locks: new Set(), rng: createRng(options.seed), nextId: 0, plain: options.plain };
  const ops: Op[] = [];
  let done = 0;
  const worker = async () => {
    while (state.nextId < options.ops && Date.now() < options.deadline) {
      const { op, model, locks } = planOp(state);
      for (const lock of locks) state.locks.add(lock);
      ops.push(op);
      try {
        await runOp(op, model);
      } finally {
        for (const lock of locks) state.locks.delete(lock);
      }
      progress(++done, options.ops);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return ops.sort((a, b) => a.id - b.id);
};
