import type { OrderItem } from '#shared/db/entities/order';
import { createOrder, replyFromCreatedOrder } from '#shared/domain/orders';
import type { Reply } from '#shared/http/envelope';
import { postApiHandler } from '#shared/http/post-api-handler';
import type { PostRoute, ReplyDataOf } from '#shared/http/route';
import { orderCreateBody } from '#shared/schemas/order';

/** The handler of an order create route, which differ only in their 201 (`created`), rebuilt from the order on a keyed retry. */
export const orderCreateHandler = <R extends PostRoute>(route: R, created: (order: OrderItem) => Reply<ReplyDataOf<R>>) =>
  postApiHandler(
    route,
    { body: orderCreateBody },
    async ({ merchant, body, ...steps }) => created(await createOrder(merchant, body, steps)),
    { replyFromStore: replyFromCreatedOrder(created) },
  );
