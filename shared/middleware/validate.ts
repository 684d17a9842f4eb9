import type { $ZodType } from 'zod/v4/core';
import * as z from 'zod/mini';
import { invalid, notFound, type FieldErrors } from '../errors';
import { laravelErrors, mergeFieldErrors } from '../validation/messages';
import type { ApiMiddleware } from './types';

export type Schemas = { body?: $ZodType; query?: $ZodType; params?: $ZodType };

/**
 * Validates path, query and body against the route's zod schemas. A path parameter of the wrong
 * shape (say, an order uuid that is not a UUID) names no resource: 404. Query and body problems
 * are one 422 keyed by field.
 */
export const validate = (schemas: Schemas): ApiMiddleware => ({
  before: (request) => {
    const { event, context } = request;
    const params = schemas.params ? z.safeParse(schemas.params, event.pathParameters ?? {}) : undefined;
    if (params && !params.success) throw notFound();

    // Field names are the client's: merged without Object.assign, which would treat a field
    // named `__proto__` as the prototype (see shared/validation/messages.ts).
    const found: FieldErrors[] = [];
    const parse = (schema: $ZodType | undefined, input: unknown) => {
      if (!schema) return undefined;
      const result = z.safeParse(schema, input);
      if (result.success) return result.data;
      found.push(laravelErrors(result.error.issues, input));
      return undefined;
    };
    const query = parse(schemas.query, event.queryStringParameters ?? {});
    const body = parse(schemas.body, context.jsonBody ?? {});
    if (found.length > 0) throw invalid(mergeFieldErrors(...found));
    context.input = { body, query, params: params?.data };
  },
});
