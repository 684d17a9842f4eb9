import { type RequestIdentity, requestIdentity } from '#shared/request-identity';
import { buildApiHandler, type Handle } from './api-handler';
import { envelopeResponse, type Reply, successStatus } from './envelope';
import { type AnswerFromStore, idempotencyKey, idempotentResponse, type ReplySecrets } from './idempotency';
import type { PostRoute, ReplyDataOf } from './route';
import type { Input, Schemas } from './validate';

/** A route's first answer from what its request wrote (identified by its write id), or undefined while that is not there. */
type ReplyFromStore<S extends Schemas, D> = (
  request: Input<S> & { merchantId: string; identity: RequestIdentity },
) => Promise<Reply<D> | undefined>;

/** A POST route's handler: apiHandler's chain plus `Idempotency-Key`, its `secrets` sealed; `replyFromStore` answers a retry. */
export const postApiHandler = <S extends Schemas, R extends PostRoute>(
  route: R,
  schemas: S,
  handle: Handle<S, ReplyDataOf<R>>,
  { secrets, replyFromStore }: { secrets?: ReplySecrets; replyFromStore?: ReplyFromStore<S, ReplyDataOf<R>> } = {},
) => {
  const fromStore: AnswerFromStore | undefined =
    replyFromStore &&
    (async (context, traceId) => {
      const merchantId = context.credential.merchant.id;
      const input = context.input as Input<S>;
      const reply = await replyFromStore({ ...input, merchantId, identity: requestIdentity(merchantId, context.requestKey) });
      return reply && envelopeResponse(route, traceId, reply);
    });
  const options = { secrets, fromStore, besideHandler: route.admitsBesideReads === true };
  return buildApiHandler(route, schemas, handle, {
    claimKey: idempotencyKey(options),
    recordResponse: idempotentResponse(options, successStatus(route)),
  });
};
