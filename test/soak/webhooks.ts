import { randomUUID } from 'node:crypto';
import { send } from './client';
import type { SoakMerchant } from './fixtures';
import { emptySeen, type Op, record } from './ops';
import { type Behaviour, Receiver } from './receivers';
import { runOp } from './workload';

/**
 * The soak merchants' webhook endpoints: each merchant gets a profile by its place in its stage,
 * and each endpoint of the profile a receiver of its own (receivers.ts), created through the API
 * before the workload starts. `healthy` merchants have only receivers that always answer: the
 * change feed's lag is measured on them.
 */

export type Profile = 'healthy' | 'outage' | 'hang-flap' | 'gone';

/** Subscriptions: every event (the filter omitted), or a few. */
const ALL = undefined;
const SOME = ['order.created', 'order.cancelled', 'commission.accrued'];

const PROFILES: readonly { profile: Profile; endpoints: { behaviour: Behaviour; events: string[] | undefined }[] }[] = [
  {
    profile: 'healthy',
    endpoints: [
      { behaviour: 'ok', events: ALL },
      { behaviour: 'ok', events: SOME },
    ],
  },
  {
    profile: 'outage',
    endpoints: [
      { behaviour: 'outage', events: ALL },
      { behaviour: 'ok', events: ALL },
    ],
  },
  {
    profile: 'hang-flap',
    endpoints: [
      { behaviour: 'hang', events: ALL },
      { behaviour: 'flap', events: SOME },
      { behaviour: 'ok', events: ALL },
    ],
  },
  {
    profile: 'gone',
    endpoints: [
      { behaviour: 'gone', events: ALL },
      { behaviour: 'ok', events: SOME },
    ],
  },
];

export type SoakEndpoint = {
  merchant: SoakMerchant;
  profile: Profile;
  receiver: Receiver;
  uuid: string;
  /** The event types it subscribes to; undefined: all of them. */
  events: string[] | undefined;
};

/** The profile of the merchant at `index` of its stage. */
export const profileOf = (index: number) => PROFILES[index % PROFILES.length] as (typeof PROFILES)[number];

/**
 * Starts the receivers and creates their endpoints (keyed, so a retry after a lost answer gets
 * the same endpoint and secret). Closes what it started when a create fails.
 */
export const createEndpoints = async (merchants: readonly SoakMerchant[]): Promise<SoakEndpoint[]> => {
  const endpoints: SoakEndpoint[] = [];
  const receivers: Receiver[] = [];
  try {
    for (const merchant of merchants) {
      const index = merchants.filter((other) => other.stage === merchant.stage).indexOf(merchant);
      const { profile, endpoints: planned } = profileOf(index);
      for (const [place, { behaviour, events }] of planned.entries()) {
        const receiver = await new Receiver(`${merchant.key}-${place}-${behaviour}`, behaviour).start();
        receivers.push(receiver);
        const response = await send({
          url: merchant.url,
          token: merchant.token,
          method: 'POST',
          path: '/api/v2/webhooks',
          body: JSON.stringify({ url: receiver.url, ...(events ? { events } : {}) }),
          idempotencyKey: randomUUID(),
        });
        const webhook = record(record(record(response.json).data).webhook);
        if (response.last.status !== 201 || typeof webhook.uuid !== 'string' || typeof webhook.secret !== 'string')
          throw new Error(`creating ${receiver.name}'s endpoint answered ${response.last.status}: ${response.last.body?.slice(0, 200)}`);
        receiver.secret = webhook.secret;
        endpoints.push({ merchant, profile, receiver, uuid: webhook.uuid, events });
      }
    }
    return endpoints;
  } catch (error) {
    await closeReceivers(receivers);
    throw error;
  }
};

export const closeReceivers = async (receivers: readonly Receiver[]) => {
  await Promise.allSettled(receivers.map((receiver) => receiver.close()));
};

export type EndpointState = { enabled: boolean | undefined; disabledReason: string | undefined; failed?: string };

/** Each endpoint as the API shows it after the run; every read is logged as a final read. */
export const readEndpointStates = async (endpoints: readonly SoakEndpoint[], log: (op: Op) => void) => {
  const states = new Map<string, EndpointState>();
  for (const endpoint of endpoints) {
    const op: Op = {
      id: -1,
      kind: 'final-read',
      merchant: endpoint.merchant,
      request: { url: endpoint.merchant.url, token: endpoint.merchant.token, method: 'GET', path: `/api/v2/webhooks/${endpoint.uuid}` },
      attempts: [],
      expect: 200,
      seen: emptySeen(),
    };
    log(op);
    const response = await runOp(op, undefined);
    const webhook = record(record(record(response.json).data).webhook);
    states.set(endpoint.uuid, {
      enabled: typeof webhook.enabled === 'boolean' ? webhook.enabled : undefined,
      disabledReason: typeof webhook.disabled_reason === 'string' ? webhook.disabled_reason : undefined,
      ...(response.last.status === 200 ? {} : { failed: String(response.last.status) }),
    });
  }
  return states;
};
