import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import * as z from 'zod/mini';
import type { $ZodType, output } from 'zod/v4/core';
import { type FieldErrors, invalid, notFound } from '#shared/errors';
import { laravelErrors, mergeFieldErrors } from '#shared/validation/messages';
import { parseJsonBody } from './json-body';
import type { ApiContext } from './types';

/** A route's zod schemas for its path parameters, query and JSON body (each optional); `bodyRequired`: no body is a 422, not `{}`. */
export type Schemas = { body?: $ZodType; query?: $ZodType; params?: $ZodType; bodyRequired?: boolean };

type Out<T> = T extends $ZodType ? output<T> : undefined;

export type Input<S extends Schemas> = { body: Out<S['body']>; query: Out<S['query']>; params: Out<S['params']> };

/** Validates path, query and body: a path parameter of the wrong shape names no resource (404); the rest is one 422 keyed by field. */
export const validateInput = <S extends Schemas>(schemas: S, event: APIGatewayProxyEvent, jsonBody: unknown): Input<S> => {
  const params = schemas.params ? z.safeParse(schemas.params, event.pathParameters ?? {}) : undefined;
  if (params && !params.success) throw notFound();

  // Field names are the client's: never merged by Object.assign (shared/validation/messages.ts).
  const found: FieldErrors[] = [];
  const parse = (schema: $ZodType | undefined, input: unknown) => {
    if (!schema) return undefined;
    const result = z.safeParse(schema, input);
    if (result.success) return result.data;
    found.push(laravelErrors(result.error.issues, input));
    return undefined;
  };
  const query = parse(schemas.query, event.queryStringParameters ?? {});
  // No body at all is `{}` unless the route requires one; a JSON `null` is a body that is not an object.
  const absent = jsonBody === undefined;
  if (schemas.bodyRequired && absent) found.push({ message: ['The request body must be a JSON object.'] });
  const body = schemas.bodyRequired && absent ? undefined : parse(schemas.body, absent ? {} : jsonBody);
  if (found.length > 0) throw invalid(mergeFieldErrors(...found));
  return { body, query, params: params?.data } as Input<S>;
};

/** The context once validation has run: the JSON body (undefined when there was none or the route reads none) and the input. */
export type ValidatedContext<S extends Schemas> = ApiContext & { jsonBody: unknown; input: Input<S> };

/** The validation step of the request chain: a body is parsed only on a route that reads one (`readsBody` in ./route). */
export const validation = <S extends Schemas>(
  schemas: S,
  readsBody: boolean,
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ValidatedContext<S>> => ({
  before: (request) => {
    request.context.jsonBody = readsBody ? parseJsonBody(request.event) : undefined;
    request.context.input = validateInput(schemas, request.event, request.context.jsonBody);
  },
});
