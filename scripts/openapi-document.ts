import * as z from 'zod/mini';
import type { $ZodType } from 'zod/v4/core';
import { responses } from '#functions/responses';
import { type RouteDef, type RouteId, routes } from '#functions/routes';
import { functionEnvironment, functionSpecs, PLACEHOLDER_VALUES, pascalCase } from '#lib/function-specs';
import { importHandler } from '#local/handlers';
import type { Stage } from '#shared/config';
import { RECORD_TTL_SECONDS } from '#shared/db/entities/idempotency';
import {
  ApiError,
  badPercentEncoding,
  busy,
  type FieldErrors,
  forbidden,
  IDEMPOTENCY_MESSAGES,
  invalid,
  keyReused,
  MAX_BODY_BYTES,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  MESSAGES,
  notFound,
  REPLAYED_HEADER,
  unauthenticated,
} from '#shared/errors';
import { legacyFailureBody, legacySuccessBody, successStatus, v2Body } from '#shared/http/envelope';
import { parseJsonBody } from '#shared/http/json-body';
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from '#shared/http/pagination';
import { acceptsIdempotencyKey, readsBody } from '#shared/http/route';
import type { Schemas } from '#shared/http/validate';
import { DEFAULT_EVENTS_LIMIT, EVENTS_RETENTION_DAYS, MAX_EVENTS_LIMIT } from '#shared/schemas/events';
import { MAX_REPORT_DAYS } from '#shared/schemas/reports';
import type { RouteResponse } from '#shared/schemas/responses';
import * as R from '#shared/schemas/responses';
import {
  EXAMPLE_GATEWAY_TRACE_ID,
  EXAMPLE_TRACE_ID,
  eventSchemaName,
  NAMED_INPUT,
  NAMED_OUTPUT,
  type Named,
  type OperationDoc,
  operations,
  validationErrors,
} from './openapi-examples';

/** The OpenAPI 3.1 document, from the manifest, the handlers' schemas, functions/responses.ts and scripts/openapi-examples.ts. */

/** The body limit as the documents say it (`2,000,000 bytes`). */
const BODY_LIMIT = `${MAX_BODY_BYTES.toLocaleString('en-US')} bytes`;

/** An operation with its response and the schemas its handler validates with. */
type Operation = OperationDoc & RouteResponse & { request: Schemas };

const PARAMETER_DOCS: Record<string, string> = {
  uuid: 'The resource UUID. A value that is not a UUID names no resource: 404.',
  slug: 'The resource slug.',
  per_page: `Items per page (default ${DEFAULT_PER_PAGE}, at most ${MAX_PER_PAGE}), in plain decimal digits (\`0x10\`, \`1e2\`, \`+5\`, \`05\` or spaces are 422). An empty value means the default.`,
  page: 'The page, from 1 (default 1), in plain decimal digits. A page past the last is empty.',
  tier_slug: 'Only the affiliates of this tier (an unknown slug: an empty page).',
  email: 'A partial, case-insensitive match on the invited address.',
  status: 'One status or several separated by commas, among `pending`, `accepted`, `declined`; default `pending`.',
  cursor:
    'The `meta.pagination.next_cursor` of the previous page, as it was given (opaque, bound to this endpoint, merchant and stage); absent or empty for the first page. Any other value is 422 on `cursor`.',
  id: 'The event id of the delivery (`event_id`, the `webhook-id` header of its requests).',
  from: 'The first UTC day of the report (`YYYY-MM-DD`); default: the first day of the month that holds the day before `to` (`to=2026-12-01` reports November), or of the current month.',
  to: `The UTC day after the report (\`YYYY-MM-DD\`, exclusive); default: the first day of the month after \`from\`. At most ${MAX_REPORT_DAYS} days after \`from\`.`,
  group_by: 'How rows are grouped: `affiliate` (default), `month`, `day`, `affiliate,month` or `affiliate,day`.',
  affiliate_slug: 'Only this affiliate (an unknown slug: no rows).',
  after: 'The `meta.next_cursor` of the previous page (opaque); absent: from the oldest event kept.',
  limit: `Events per page (default ${DEFAULT_EVENTS_LIMIT}, at most ${MAX_EVENTS_LIMIT}), in plain decimal digits as \`per_page\`. An empty value means the default.`,
  types: 'Only these event types, separated by commas (for example `order.created,order.cancelled`).',
  created_gte: 'Only events whose `timestamp` is at or after this time (ISO 8601 with offset).',
  created_lt:
    'Only events whose `timestamp` is before this time (ISO 8601 with offset); after `created_gte` when both are given (422 otherwise).',
};

type Json = Record<string, any>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** How zod schemas become JSON Schema: 2020-12, and a schema it cannot represent is an error. */
const JSON_SCHEMA_OPTIONS = { target: 'draft-2020-12', unrepresentable: 'throw' } as const;

/** zod schemas to JSON Schema, sharing one registry so named schemas become $refs. */
const jsonSchemas = (named: Record<string, Named>, io: 'input' | 'output') => {
  const registry = z.registry<{ id: string }>();
  for (const [id, [schema, example]] of Object.entries(named))
    registry.add(schema, { id, ...(example === undefined ? {} : { examples: [example] }) });
  const { schemas } = z.toJSONSchema(registry, { ...JSON_SCHEMA_OPTIONS, io, uri: (id) => ref(id).$ref });
  return Object.fromEntries(Object.entries(schemas).map(([id, schema]) => [id, stripSchemaKeyword(schema as Json)]));
};

const stripSchemaKeyword = ({ $schema: _schema, $id: _id, ...rest }: Json): Json => rest;

/** A request schema (path, query) as JSON Schema, written out in place. */
const inputSchema = (schema: $ZodType) => stripSchemaKeyword(z.toJSONSchema(schema, { ...JSON_SCHEMA_OPTIONS, io: 'input' }) as Json);

/** OpenAPI 3.1's top-level `webhooks`: what the API sends to a merchant's endpoints, per event type. */
const WEBHOOK_HEADERS = {
  'webhook-id': 'The event id: the same on every delivery of this event (deduplicate on it).',
  'webhook-timestamp': 'When this delivery was signed, in Unix seconds.',
  'webhook-signature': '`v1,<base64 HMAC-SHA256 of id.timestamp.body>`, one per secret in effect, space-separated.',
};
const outgoingWebhooks = () =>
  Object.fromEntries(
    Object.keys(R.webhookEventPayloads).map((type) => [
      type,
      {
        post: {
          operationId: `webhook-${type.replace(/[._]/g, '-')}`,
          summary: `The ${type} event`,
          description:
            'Delivered at least once, retried on the Standard Webhooks schedule for about 3 days; any 2xx within 15 s is success, `410 Gone` disables the endpoint.',
          parameters: Object.entries(WEBHOOK_HEADERS).map(([name, description]) => ({
            name,
            in: 'header',
            required: true,
            description,
            schema: { type: 'string' },
          })),
          requestBody: { required: true, content: { 'application/json': { schema: ref(eventSchemaName(type)) } } },
          responses: { '200': { description: 'Any 2xx: received.' }, '410': { description: 'Gone: the endpoint is disabled at once.' } },
        },
      },
    ]),
  );

const OUTPUT_EXAMPLES = new Map(Object.values(NAMED_OUTPUT).map(([schema, example]) => [schema, example]));
/** The name and example of each request body. */
const BODY_NAMES = new Map(Object.entries(NAMED_INPUT).map(([name, [schema, example]]) => [schema, { name, example }]));

/** `<Operation>Envelope`: client generators take `<Operation>Response` and the like for their own types. */
const successName = (id: RouteId) => `${pascalCase(id)}Envelope`;

const successSchema = (route: RouteDef, operation: Operation): $ZodType =>
  route.envelope === 'legacy' ? R.legacySuccess(operation.data) : R.v2Success(operation.data, operation.pagination, operation.meta);

const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
const RETRY_AFTER = { 'Retry-After': header('RetryAfter') };
const QUOTA_HEADERS = { 'RateLimit-Policy': header('RateLimitPolicy'), RateLimit: header('RateLimit') };

/** A media type's `examples`: one example per name. */
type Example = { summary: string; value: unknown };
type Examples = Record<string, Example>;
/** The examples that apply, by name. */
const named = (entries: (false | undefined | [string, Example])[]): Examples => Object.fromEntries(entries.filter((entry) => !!entry));

const errorResponse = (description: string, schema: Json, examples: Examples, headers?: Json) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema, examples } },
});

/** What API Gateway / WAF answer themselves, as shared/http/envelope.ts builds the V2 envelope. */
const fromGateway = (summary: string, errors: FieldErrors): Example => ({ summary, value: v2Body(EXAMPLE_GATEWAY_TRACE_ID, { errors }) });

/** What the JSON body step answers for a body that is not JSON. */
const malformedJson = (): ApiError => {
  try {
    parseJsonBody({ body: '{"order_no": ', isBase64Encoded: false });
  } catch (error) {
    if (error instanceof ApiError) return error;
  }
  throw new Error('a malformed body was accepted');
};

/** A refusal keyed by `field`, as the code answers it. */
const refusal = (status: number, message: string, field = 'message') => new ApiError(status, { [field]: [message] });

/** What API Gateway / WAF answer themselves: the V2 envelope with a gateway trace id, on every path. */
const GATEWAY_FAILURE = ref('GatewayFailure');

/** The route's own answer to an error, in its envelope. */
const ownAnswer =
  (route: RouteDef) =>
  (summary: string, { statusCode, errors }: ApiError): Example => ({
    summary,
    value: route.envelope === 'legacy' ? legacyFailureBody(statusCode, errors) : v2Body(EXAMPLE_TRACE_ID, { errors }),
  });

/** 422: validation, a body that is not JSON, a business rule, an Idempotency-Key used with another request. */
const unprocessable = (route: RouteDef, operation: Operation, unfit: Json) => {
  const { body, query } = operation.request;
  const post = acceptsIdempotencyKey(route);
  const own = ownAnswer(route);
  const causes = [
    body && 'the body is not valid JSON or fails validation (keyed by field name)',
    !body && readsBody(route) && 'the body is not valid JSON',
    query && 'a query parameter fails validation (keyed by parameter name)',
    post && 'the Idempotency-Key was used with a different request (`message`)',
    operation.refusals && `a business rule refuses it (keyed by the field it is about, else \`message\`): ${operation.refusals}`,
  ];
  const validated = body ?? query;
  return errorResponse(
    `Refused: ${causes.filter(Boolean).join('; ')}.`,
    unfit,
    named([
      validated &&
        operation.invalid !== undefined && [
          'validation',
          own('Validation failed', invalid(validationErrors(validated, operation.invalid))),
        ],
      readsBody(route) && ['malformed_json', own('Body is not JSON', malformedJson())],
      ...Object.entries(operation.refused ?? {}).map(([name, errors]): [string, Example] => [
        name,
        own(`Refused: ${Object.values(errors)[0]?.[0]}`, invalid(errors)),
      ]),
      post && ['idempotency_key_reused', own('Key used with another request', keyReused())],
    ]),
  );
};

/** The failures of one route, per status, in its envelope, each with the code's real answer as its example. */
const failures = (route: RouteDef, operation: Operation) => {
  const legacy = route.envelope === 'legacy';
  const failure = legacy ? ref('LegacyRefused') : ref('Failure');
  /** A request the route cannot take as it is (400, 422). */
  const unfit = legacy ? ref('LegacyInvalid') : ref('Failure');
  const { body, query, params } = operation.request;
  const post = acceptsIdempotencyKey(route);
  const own = ownAnswer(route);
  const out: Record<string, Json> = {};
  if (params || post) {
    const parameter = Object.keys(operation.parameters ?? {})[0] ?? 'uuid';
    const causes = [
      params && 'a path parameter is not valid percent-encoding',
      post && `the Idempotency-Key header is empty or longer than ${MAX_IDEMPOTENCY_KEY_LENGTH} characters (\`idempotency_key\`)`,
    ];
    out['400'] = errorResponse(
      `${causes.filter(Boolean).join('; or ')}.`.replace(/^./, (first) => first.toUpperCase()),
      params && post ? { anyOf: [GATEWAY_FAILURE, unfit] } : post ? unfit : GATEWAY_FAILURE,
      named([
        params && ['bad_percent_encoding', fromGateway('Bad percent-encoding', { message: [badPercentEncoding(parameter)] })],
        post && [
          'idempotency_key_malformed',
          own('Idempotency-Key empty or too long', refusal(400, IDEMPOTENCY_MESSAGES.required, 'idempotency_key')),
        ],
      ]),
    );
  }
  out['401'] = errorResponse(
    'The bearer token is missing, unknown or revoked (`Unauthenticated.`).',
    legacy ? ref('LegacyUnauthenticated') : failure,
    { example: own('No valid token', unauthenticated()) },
  );
  out['403'] = errorResponse(
    `A token of the other stage's kind (testing on live, live on sandbox)${route.placesOrders ? ', or, on live, a token not allowed to place live orders' : ''}.`,
    failure,
    named([
      ['testing_token_on_live', own('A testing token on the live API', forbidden(MESSAGES.wrongTokenKind.live))],
      ['live_token_on_sandbox', own('A live token on the sandbox API', forbidden(MESSAGES.wrongTokenKind.sandbox))],
      route.placesOrders && ['no_live_orders', own('A token not allowed to place live orders', forbidden(MESSAGES.noLiveOrders))],
    ]),
  );
  if (params)
    out['404'] = errorResponse('No such resource for this merchant (`Not Found`).', failure, {
      example: own('Missing or owned by another merchant', notFound()),
    });
  if (post)
    out['409'] = errorResponse(
      'A request with this Idempotency-Key is still being processed: retry after Retry-After seconds.',
      failure,
      { example: own('Same key still in flight', refusal(409, IDEMPOTENCY_MESSAGES.inFlight)) },
      RETRY_AFTER,
    );
  // The gateway measures the body before it routes, whatever the method.
  out['413'] = errorResponse(`The body is ${BODY_LIMIT} or larger.`, GATEWAY_FAILURE, {
    example: fromGateway('Body too large', { message: [MESSAGES.bodyTooLarge] }),
  });
  if (body || query || post || operation.refusals) out['422'] = unprocessable(route, operation, unfit);
  out['429'] = errorResponse(
    "The merchant's quota is spent (RateLimit says when it refills), or a coarse backstop (per token, per client IP, the stage's throttle) refused it: retry after Retry-After seconds, which is enough.",
    { anyOf: [failure, GATEWAY_FAILURE] },
    {
      quota: own("The merchant's quota is spent", refusal(429, MESSAGES.tooManyAttempts)),
      backstop: fromGateway('A backstop (WAF, stage throttle) refused it', { message: [MESSAGES.tooManyAttempts] }),
    },
    RETRY_AFTER,
  );
  out['503'] = errorResponse(
    'A dependency timed out or throttled: nothing was wrong with the request; retry after Retry-After seconds.',
    failure,
    { example: own('Busy', busy()) },
    RETRY_AFTER,
  );
  return out;
};

/** Plain strings: the API answers 404 for a value that names no resource, where a format check would answer 400. */
const PATH_PARAMETER_SCHEMA = { type: 'string' };

const parameters = (route: RouteDef, operation: Operation): Json[] => [
  ...(['path', 'query'] as const).flatMap((location) => {
    const schema = location === 'path' ? operation.request.params : operation.request.query;
    const object = schema ? inputSchema(schema) : {};
    const required = new Set<string>(object.required ?? []);
    return Object.entries(object.properties ?? {}).map(([name, property]) => {
      const example = operation.parameters?.[name];
      // A parameter's own schema may describe it (one refused on this route); else the shared words for its name.
      const description = (property as Json).description ?? PARAMETER_DOCS[name];
      return {
        name,
        in: location,
        required: location === 'path' || required.has(name),
        ...(description ? { description } : {}),
        schema: location === 'path' ? PATH_PARAMETER_SCHEMA : property,
        ...(example === undefined ? {} : { example }),
      };
    });
  }),
  ...(acceptsIdempotencyKey(route) ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
];

/** The example of a response schema: a named one's own, an object's per field, an array's of one element. */
const exampleOf = (schema: $ZodType): unknown => {
  const def = schema._zod.def as Json;
  if (OUTPUT_EXAMPLES.has(schema)) return OUTPUT_EXAMPLES.get(schema);
  if (def.type === 'object') return Object.fromEntries(Object.entries(def.shape as Json).map(([key, field]) => [key, exampleOf(field)]));
  if (def.type === 'array') return [exampleOf(def.element)];
  if (def.type === 'null') return null;
  throw new Error(`no example for a response schema of type ${def.type}: name it in NAMED_OUTPUT`);
};

/** The success body of an operation's example, in the route's envelope. */
const successExample = (route: RouteDef, { answer, data, answerMeta }: Operation) => {
  const example = answer === undefined ? exampleOf(data) : answer;
  return route.envelope === 'legacy'
    ? legacySuccessBody(MESSAGES.orderCreated, example)
    : v2Body(EXAMPLE_TRACE_ID, { data: example, meta: answerMeta ?? {} });
};

/** A POST without a body schema still takes (and ignores) a body, up to the body limit. */
const IGNORED_BODY = {
  required: false,
  description: `No fields: a JSON body is accepted and ignored (a body that is not JSON: 422; of ${BODY_LIMIT} or more: 413).`,
  content: { 'application/json': { schema: {} } },
};

/** A stage's deployed API (its stack's `ApiUrl` output). */
const cloudServer = (stage: Stage, who: string) => ({
  url: `https://{apiId}.execute-api.{region}.amazonaws.com/${stage}`,
  description: `${who}: the \`ApiUrl\` output of the affiliate-merchant-api-${stage} stack; \`apiId\` is its REST API id.`,
  variables: { apiId: { default: `your-${stage}-api-id` }, region: { default: 'eu-west-1' } },
});

/** What the document says of the API as a whole, before its operations. */
const ABOUT = {
  openapi: '3.1.0',
  info: {
    title: 'Affiliate Program Merchant API',
    version: '2.0.0',
    summary: 'Orders and the affiliate program of one merchant.',
    description: [
      'Every request carries `Authorization: Bearer <token>`: live tokens on the live server, testing tokens on the sandbox.',
      'V2 responses use the envelope `{success, data, errors, meta}`; `meta.trace_id` identifies the request.',
      'Every POST accepts an `Idempotency-Key` header: a retry with the same key and request gets the stored answer (`Idempotent-Replayed: true`).',
      'This document is generated from the code (`npm run openapi`).',
    ].join('\n\n'),
    license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
  },
  servers: [
    cloudServer('live', 'Live (live tokens)'),
    cloudServer('sandbox', 'Sandbox (testing tokens)'),
    {
      url: 'http://127.0.0.1:{port}',
      description: `The local stack (\`npm start\`; a local stage serves the document with itself here): live on 3000 (live tokens), sandbox on 3001 (testing tokens); \`PORT\` and \`SANDBOX_PORT\` move them.`,
      variables: { port: { default: '3000' } },
    },
  ],
  security: [{ bearerToken: [] }],
  tags: [
    { name: 'Orders', description: "Orders placed through the merchant's shop; each one earns its affiliate a commission." },
    { name: 'Affiliates', description: "The merchant's affiliates." },
    { name: 'Invites', description: 'Invitations e-mailed to prospective affiliates.' },
    { name: 'Affiliate requests', description: "Requests to join the merchant's program." },
    { name: 'Tiers', description: 'Commission tiers.' },
    { name: 'Segments', description: 'Product segments and their rate per tier.' },
    { name: 'Webhooks', description: "Endpoints that receive the merchant's events, signed per Standard Webhooks (see `webhooks`)." },
    { name: 'Reports', description: 'What the commission ledgers add up to, per affiliate, month or day.' },
    {
      name: 'Events',
      description: `The merchant's event log: the events webhooks deliver, read by polling, kept ${EVENTS_RETENTION_DAYS} days.`,
    },
  ] as const,
};

/** A route's tag: the one its id starts with (`affiliate-requests-get`: Affiliate requests). */
const tagOf = (id: RouteId) => {
  const tag = ABOUT.tags.find(({ name }) => id.startsWith(`${name.toLowerCase().replace(' ', '-')}-`));
  if (!tag) throw new Error(`${id}: no tag of ABOUT.tags names it`);
  return tag.name;
};

/** The operation of one route, with its examples, its request schemas and every answer it gives. */
const operationObject = (route: RouteDef & { id: RouteId }, operation: Operation): Json => {
  const status = successStatus(route);
  const post = acceptsIdempotencyKey(route);
  const replayed = post ? { 'Idempotent-Replayed': header('IdempotentReplayed') } : {};
  const failureResponses = failures(route, operation);
  for (const [status, response] of Object.entries(failureResponses)) {
    // The merchant's quota: its headers on every answer once the caller is authenticated.
    if (!['400', '401', '403', '413'].includes(status)) response.headers = { ...response.headers, ...QUOTA_HEADERS };
    // What is answered after the key is claimed, below 500, is stored and may be replayed.
    if (['404', '422'].includes(status)) response.headers = { ...response.headers, ...replayed };
  }
  const body = operation.request.body;
  const named = body && BODY_NAMES.get(body);
  if (body && !named) throw new Error(`${route.id}: name its body schema in NAMED_INPUT`);
  const example = operation.body ?? named?.example;
  const requestBody = named
    ? { requestBody: { required: true, content: { 'application/json': { schema: ref(named.name), example } } } }
    : route.method === 'POST'
      ? { requestBody: IGNORED_BODY }
      : {};
  return {
    operationId: route.id,
    tags: [tagOf(route.id)],
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    ...(route.envelope === 'legacy' ? { deprecated: true } : {}),
    parameters: parameters(route, operation),
    ...requestBody,
    responses: {
      [String(status)]: {
        description: { 200: 'OK', 201: 'Created', 202: 'Accepted' }[status],
        headers: { ...replayed, ...QUOTA_HEADERS },
        content: { 'application/json': { schema: ref(successName(route.id)), example: successExample(route, operation) } },
      },
      ...failureResponses,
    },
  };
};

/** Every operation with its handler's request `schemas`; placeholders stand in for the environment a handler reads at import. */
const documentedOperations = async (): Promise<Record<RouteId, Operation>> => {
  const placeholders = functionSpecs().flatMap((spec) =>
    spec.kind === 'route' ? Object.entries(functionEnvironment(spec, PLACEHOLDER_VALUES)) : [],
  );
  for (const [name, value] of placeholders) process.env[name] ??= value;
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const documented = {} as Record<RouteId, Operation>;
  for (const route of routes) {
    const { schemas } = await importHandler<{ schemas: Schemas }>(route.handler);
    documented[route.id] = { ...operations[route.id], ...responses[route.id], request: schemas };
  }
  return documented;
};

export const buildOpenApiDocument = async () => {
  const ops = await documentedOperations();
  const successSchemas = Object.fromEntries(
    routes.map((route): [string, Named] => [successName(route.id), [successSchema(route, ops[route.id])]]),
  );
  const paths: Record<string, Record<string, Json>> = {};
  for (const route of routes)
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operationObject(route, ops[route.id]) };

  return {
    ...ABOUT,
    paths,
    webhooks: outgoingWebhooks(),
    components: {
      securitySchemes: {
        bearerToken: { type: 'http', scheme: 'bearer', description: 'A merchant API token: `live_…` on live, `test_…` on the sandbox.' },
      },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: `Makes the POST safe to retry: the same key with the same request (method, path, and body compared as JSON) gets the first answer again. Kept ${RECORD_TTL_SECONDS / 3600} hours, per merchant. A request refused for malformed JSON or validation (422) keeps nothing, so its corrected retry with the same key runs.`,
          schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
        },
      },
      headers: {
        RetryAfter: { description: 'Seconds to wait before retrying.', required: true, schema: { type: 'string', pattern: '^[0-9]+$' } },
        RateLimitPolicy: {
          description:
            "The merchant's quota (IETF draft-ietf-httpapi-ratelimit-headers): `q` requests per `w` seconds, so q/w is its steady rate per second; `w` is the shortest whole number of seconds whose quota holds the burst (the most it may send at once, never more than `q`). On every answer to an authenticated request, Idempotency-Key replays included.",
          required: false,
          schema: { type: 'string', pattern: '^"default";q=[0-9]+;w=[0-9]+$' },
          example: '"default";q=100;w=2',
        },
        RateLimit: {
          description:
            "What is left of the quota: `r` requests now (never more than the burst, so never more than the policy's `q`), full again in `t` seconds.",
          required: false,
          schema: { type: 'string', pattern: '^"default";r=[0-9]+;t=[0-9]+$' },
          example: '"default";r=42;t=1',
        },
        IdempotentReplayed: {
          description: `\`true\` when the answer is the stored one of an earlier request with the same Idempotency-Key (header \`${REPLAYED_HEADER}\`).`,
          required: false,
          schema: { type: 'string', enum: ['true'] },
        },
      },
      schemas: { ...jsonSchemas({ ...NAMED_OUTPUT, ...successSchemas }, 'output'), ...jsonSchemas(NAMED_INPUT, 'input') },
    },
  };
};
