import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { handler as getAffiliate } from '#functions/affiliates/get';
import { handler as createInvite } from '#functions/invites/create';
import { handler as createOrder } from '#functions/orders/create';
import * as commonSchemas from '#shared/schemas/common';
import * as orderSchemas from '#shared/schemas/order';
import * as programSchemas from '#shared/schemas/program';
import { laravelErrors } from '#shared/validation/messages';
import { apiEvent, expectV2Error, invoke } from './support/api';
import { ddbMock, resetAwsMocks } from './support/aws';
import { orderBody, stubAuth, TOKENS } from './support/fixtures';

/**
 * JSON may carry a lone surrogate ("\ud800"): a string no UTF-8 encoder takes, so it failed later
 * (SES on every retry of its e-mail). Every text field of every body, query and path is
 * checked at the door instead.
 */
const LONE_SURROGATES = ['\ud800', 'abc\udfff', '\udc00\ud800'];
const messageFor = (key: string) => `The ${key.replace(/_/g, ' ')} field must be a valid UTF-8 string.`;

type Def = { type: string; shape?: Record<string, Schema>; element?: Schema; innerType?: Schema; in?: Schema };
type Schema = { _zod: { def: Def } };
const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && '_zod' in value;

/** The paths of every string leaf of a schema (array elements as index 0). */
const stringPaths = (schema: Schema, path: (string | number)[] = []): (string | number)[][] => {
  const def = schema._zod.def;
  switch (def.type) {
    case 'string':
      return [path];
    case 'object':
      return Object.entries(def.shape ?? {}).flatMap(([key, value]) => stringPaths(value, [...path, key]));
    case 'array':
      return stringPaths(def.element as Schema, [...path, 0]);
    case 'optional':
    case 'nullable':
      return stringPaths(def.innerType as Schema, path);
    case 'pipe':
      return stringPaths(def.in as Schema, path);
    default:
      return [];
  }
};

/** An input holding `value` at `path` (and nothing else). */
const inputAt = (path: (string | number)[], value: unknown): unknown => {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  return typeof head === 'number' ? [inputAt(rest, value)] : { [head as string]: inputAt(rest, value) };
};

const objectSchemas = Object.entries({ ...commonSchemas, ...orderSchemas, ...programSchemas } as Record<string, unknown>).filter(
  (entry): entry is [string, Schema] => isSchema(entry[1]) && entry[1]._zod.def.type === 'object',
);
const cases = objectSchemas.flatMap(([name, schema]) => stringPaths(schema).map((path) => [name, path.join('.'), schema, path] as const));

describe('every text field of every request schema', () => {
  it('is found by the walk (the walk itself works)', () => {
    expect(cases.map(([name, key]) => `${name}:${key}`)).toEqual(
      expect.arrayContaining([
        'orderCreateBody:order_rows.0.product_name',
        'orderCreateBody:customer.email',
        'inviteCreateBody:content',
        'slugParams:slug',
        'affiliateRequestListQuery:status',
      ]),
    );
  });

  it.each(cases)('%s.%s refuses lone surrogates with a 422 message', (_name, key, schema, path) => {
    for (const value of LONE_SURROGATES) {
      // Act
      const input = inputAt(path, value);
      const result = z.safeParse(schema as unknown as z.ZodMiniType, input);

      // Assess
      expect(result.success).toBe(false);
      expect(laravelErrors(result.error?.issues ?? [], input)[key]).toEqual([messageFor(key)]);
    }
  });

  it('keeps well-formed text, astral characters (paired surrogates) included', () => {
    // Act
    const result = z.safeParse(programSchemas.inviteCreateBody, {
      email: 'erin@example.com',
      sender_email: 'owner@acme.example',
      content: 'Welcome 🏕️, Zoë! 山',
    });

    // Assess
    expect(result).toMatchObject({ success: true, data: { content: 'Welcome 🏕️, Zoë! 山' } });
  });
});

const sesMock = mockClient(SESClient);

describe('the endpoints', () => {
  beforeEach(() => {
    resetAwsMocks();
    sesMock.reset();
    stubAuth();
  });

  it('refuses an invite whose content is a lone surrogate: 422, nothing written, no e-mail', async () => {
    // Act
    const response = await invoke(
      createInvite,
      apiEvent('invites-create', {
        token: TOKENS.live,
        rawBody: '{"email":"erin@example.com","sender_email":"owner@acme.example","content":"\\ud800"}',
      }),
    );

    // Assess
    expectV2Error(response, 422, { content: ['The content field must be a valid UTF-8 string.'] });
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
  });

  it('refuses an order with a lone surrogate in a row, naming the field', async () => {
    // Prepare
    const raw = JSON.stringify(orderBody()).replace('"Tent"', '"Tent \\udc00"');

    // Act
    const response = await invoke(createOrder, apiEvent('orders-create', { token: TOKENS.live, rawBody: raw }));

    // Assess
    expectV2Error(response, 422, { 'order_rows.0.product_name': ['The order rows.0.product name field must be a valid UTF-8 string.'] });
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
  });

  it('answers 404 for a slug that is not well-formed text, without a lookup', async () => {
    // Prepare: API Gateway hands the decoded parameter over as it is
    const event = apiEvent('affiliates-get', { token: TOKENS.live, pathParameters: { slug: 'alice' } });
    event.pathParameters = { slug: 'al\ud800ice' };

    // Act
    const response = await invoke(getAffiliate, event);

    // Assess
    expect(response.statusCode).toBe(404);
    expect(ddbMock.commandCalls(GetCommand).filter((call) => String(call.args[0].input.Key?.sk).startsWith('AFFILIATE#'))).toHaveLength(0);
  });
});
