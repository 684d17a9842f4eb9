import { createHash } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { APIGatewayProxyEvent, DynamoDBStreamEvent, SQSEvent, SQSRecord } from 'aws-lambda';
import { type RouteId, route } from '#functions/routes';
import { proxyEvent } from '#local/apigw';
import { DEMO, DEMO_DELIVERY_EVENT_ID } from '#local/demo';
import { toSqsRecord } from '#local/sqs-poller';
import { toDynamoDBRecord } from '#local/stream-poller';
import { blockCountKey } from '#shared/db/entities/counter';
import { buildOrder, orderRecord } from '#shared/db/entities/order';
import { type QueueId, queueNameForStage, tableNameForStage } from '#shared/db/table-def';
import { testWebhookEvent } from '#shared/webhooks/events';

/** The sample events of events/, one per function, on the demo merchant, in an order that runs once on a fresh stack. */
type RouteSample = { id: RouteId; pathParameters?: Record<string, string>; query?: Record<string, string>; body?: unknown };

const order = (orderNo: string) => ({
  affiliate_slug: 'alice',
  order_no: orderNo,
  total_shipping_value: 495,
  currency_code: 'EUR',
  customer: { name: 'Erin Example', email: 'erin.customer@example.com' },
  order_rows: [
    { product_name: 'Trail boots', product_sku: 'SKU-1', segment_slug: 'boots', price_value: 12900, tax_value: 2451, quantity: 1 },
    { product_name: 'Tent', product_sku: 'TENT-2P', price_value: 19900, tax_value: 3781, quantity: 1 },
  ],
});

/** One sample per route of the manifest: a route without one does not compile. The OpenAPI examples name the same resources. */
export const SAMPLES = {
  'orders-create-legacy': { body: order('DEMO-EVENT-LEGACY-1') },
  'orders-create': { body: order('DEMO-EVENT-V2-1') },
  'orders-list': { query: { page: '1', per_page: '15' } },
  'orders-get': { pathParameters: { uuid: DEMO.orderUuid } },
  'orders-update': { pathParameters: { uuid: DEMO.orderUuid }, body: { total_shipping_value: 595 } },
  'orders-cancel': { pathParameters: { uuid: DEMO.orderUuid } },
  'affiliates-list': { query: { per_page: '15', tier_slug: 'gold' } },
  'affiliates-get': { pathParameters: { slug: 'alice' } },
  'invites-create': {
    body: { email: 'frank.affiliate@example.com', sender_email: 'owner@acme.example', content: 'Join the Acme Outdoor partner program!' },
  },
  'invites-list': { query: { per_page: '15', email: 'example.com' } },
  'affiliate-requests-list': { query: { status: 'pending', per_page: '15', page: '1' } },
  'affiliate-requests-get': { pathParameters: { uuid: DEMO.pendingRequestUuid } },
  'affiliate-requests-accept': { pathParameters: { uuid: DEMO.pendingRequestUuid } },
  'affiliate-requests-decline': { pathParameters: { uuid: DEMO.secondPendingRequestUuid } },
  'tiers-list': { query: { per_page: '15' } },
  'tiers-get': { pathParameters: { slug: 'gold' } },
  'segments-list': { query: { per_page: '15' } },
  'segments-get': { pathParameters: { uuid: DEMO.segmentUuid } },
  'webhooks-create': {
    body: {
      url: 'https://shop.example.com/hooks/affiliates',
      events: ['order.created', 'commission.accrued'],
      description: 'Shop back office',
    },
  },
  'webhooks-list': {},
  'webhooks-get': { pathParameters: { uuid: DEMO.webhookUuid } },
  'webhooks-update': {
    pathParameters: { uuid: DEMO.webhookUuid },
    body: { description: 'The local webhook inbox, every event' },
  },
  'webhooks-rotate-secret': { pathParameters: { uuid: DEMO.webhookUuid } },
  'webhooks-test': { pathParameters: { uuid: DEMO.webhookUuid } },
  'events-list': { query: { limit: '25', types: 'order.created' } },
  'webhooks-deliveries': { pathParameters: { uuid: DEMO.webhookUuid }, query: { per_page: '15' } },
  'webhooks-resend': { pathParameters: { uuid: DEMO.webhookUuid, id: DEMO_DELIVERY_EVENT_ID } },
  'webhooks-recover': { pathParameters: { uuid: DEMO.webhookUuid }, body: {} },
  'reports-commissions': { query: { from: '2026-11-01', to: '2026-12-01', group_by: 'affiliate,month' } },
  'webhooks-delete': { pathParameters: { uuid: DEMO.webhookUuid } },
} satisfies Record<RouteId, Omit<RouteSample, 'id'>>;

export const ROUTE_SAMPLES: RouteSample[] = (Object.keys(SAMPLES) as RouteId[]).map((id) => ({ id, ...SAMPLES[id] }));

/** The local live stage, as `npm start` serves it. */
const HOST = '127.0.0.1:3000';
const SOURCE_IP = '127.0.0.1';
const USER_AGENT = 'merchant-platform/1.0 (sample event)';
/** A fixed instant, so regenerating the files changes nothing. */
const REQUEST_TIME_EPOCH = Date.UTC(2026, 10, 22, 9, 30, 0);

/** A stable UUID-shaped id per sample (API Gateway's request ids are UUIDs). */
const stableUuid = (seed: string) => {
  const hex = createHash('sha256').update(seed).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};

const fillPath = (path: string, params: Record<string, string> = {}) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`sample for ${path} lacks path parameter ${name}`);
    return encodeURIComponent(value);
  });

/** The API Gateway REST (Lambda proxy) event for a sample, as the deployed stage sends it. */
const routeEvent = (sample: RouteSample): APIGatewayProxyEvent => {
  const body = sample.body === undefined ? null : JSON.stringify(sample.body);
  const headers: Record<string, string> = {
    Accept: 'application/json',
    Authorization: `Bearer ${DEMO.tokens.live}`,
    ...(body === null ? {} : { 'Content-Type': 'application/json' }),
    Host: HOST,
    'User-Agent': USER_AGENT,
    'X-Amzn-Trace-Id': `Root=1-${(REQUEST_TIME_EPOCH / 1000).toString(16)}-${stableUuid(`${sample.id}:trace`).replace(/-/g, '').slice(0, 24)}`,
    'X-Forwarded-For': SOURCE_IP,
    'X-Forwarded-Port': '3000',
    'X-Forwarded-Proto': 'http',
  };
  const entry = route(sample.id);
  return proxyEvent({
    route: entry,
    path: fillPath(entry.path, sample.pathParameters),
    headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    query: Object.fromEntries(Object.entries(sample.query ?? {}).map(([name, value]) => [name, [value]])),
    pathParameters: sample.pathParameters,
    body,
    stage: 'live',
    sourceIp: SOURCE_IP,
    requestId: stableUuid(`${sample.id}:request`),
    extendedRequestId: stableUuid(`${sample.id}:extended`).replace(/-/g, '').slice(0, 16),
    epoch: REQUEST_TIME_EPOCH,
  });
};

/** One SQS record with `body`, as the event source mapping of `queue` delivers it (the local poller's record of it). */
const sqsRecord = (id: string, queue: QueueId, body: unknown): SQSRecord => {
  const text = JSON.stringify(body);
  const message = {
    MessageId: stableUuid(`${id}:message`),
    ReceiptHandle: 'sample-receipt-handle',
    Body: text,
    Attributes: { SentTimestamp: String(REQUEST_TIME_EPOCH), ApproximateFirstReceiveTimestamp: String(REQUEST_TIME_EPOCH + 5) },
    MD5OfBody: createHash('md5').update(text).digest('hex'),
  };
  return toSqsRecord(message, `arn:aws:sqs:us-east-1:000000000000:${queueNameForStage('live', queue)}`, 'us-east-1');
};

/** The stream event Lambda hands the change feed: one INSERT of a new demo order, as the create builds and the table stores it. */
const changeFeedEvent = (): DynamoDBStreamEvent => {
  const built = buildOrder(order('DEMO-STREAM-1'), {
    uuid: stableUuid('change-feed:order'),
    seq: 1_000_000,
    created_at: new Date(REQUEST_TIME_EPOCH).toISOString(),
  });
  // Stable row uuids in place of the random ones, so regenerating the file changes nothing.
  const rows = built.order_rows.map((row, index) => ({ ...row, uuid: stableUuid(`change-feed:row:${index}`) }));
  const item = orderRecord(DEMO.merchantId, { ...built, order_rows: rows }, { history: false });
  const image = marshall(item, { removeUndefinedValues: true });
  const streamArn = `arn:aws:dynamodb:us-east-1:000000000000:table/${tableNameForStage('live')}/stream/2026-11-22T09:00:00.000`;
  const record = {
    eventID: createHash('sha256').update('change-feed:event').digest('hex').slice(0, 32),
    eventName: 'INSERT' as const,
    dynamodb: {
      ApproximateCreationDateTime: new Date(REQUEST_TIME_EPOCH),
      Keys: marshall({ pk: item.pk, sk: item.sk }),
      NewImage: image,
      SequenceNumber: '100000000000000000001',
      SizeBytes: JSON.stringify(image).length,
      StreamViewType: 'NEW_AND_OLD_IMAGES' as const,
    },
  };
  return { Records: [toDynamoDBRecord(record, streamArn, 'us-east-1')] };
};

/** A test event's delivery to the demo endpoint. */
const TEST_DELIVERY = {
  merchant_id: DEMO.merchantId,
  endpoint_uuid: DEMO.webhookUuid,
  // The test route's own event, with a fixed id in place of its fresh one.
  event: { ...testWebhookEvent(DEMO.webhookUuid, new Date(REQUEST_TIME_EPOCH).toISOString()), id: 'evt_test_sample' },
  attempt: 1,
};

/** Every sample event by function id (file name: events/<id>.json). */
export const sampleEvents = (): Record<string, APIGatewayProxyEvent | SQSEvent | DynamoDBStreamEvent> => ({
  ...Object.fromEntries(ROUTE_SAMPLES.map((sample) => [sample.id, routeEvent(sample)])),
  'change-feed': changeFeedEvent(),
  'commissions-process': {
    Records: [
      sqsRecord('commissions-process', 'orders', { type: 'order.created', merchant_id: DEMO.merchantId, order_uuid: DEMO.orderUuid }),
    ],
  },
  'webhooks-deliver': { Records: [sqsRecord('webhooks-deliver', 'webhooks', TEST_DELIVERY)] },
  'webhooks-deliver-slow': { Records: [sqsRecord('webhooks-deliver-slow', 'webhooks-slow', { ...TEST_DELIVERY, slow: true })] },
  'follow-ups': {
    Records: [
      sqsRecord('follow-ups', 'follow-ups', {
        kind: 'recount',
        key: blockCountKey(DEMO.merchantId, 'orders', 'all', 0),
        due: new Date(REQUEST_TIME_EPOCH).toISOString(),
      }),
    ],
  },
});

export const eventFileContent = (event: unknown) => `${JSON.stringify(event, null, 2)}\n`;
