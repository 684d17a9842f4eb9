import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { invalidField } from '#shared/errors';
import type { ApiContext } from './types';

/** Parses a JSON body (undefined when there is none); malformed JSON is a 422 envelope, never a 500. */
export const parseJsonBody = (event: Pick<APIGatewayProxyEvent, 'body' | 'isBase64Encoded'>): unknown => {
  const { body, isBase64Encoded } = event;
  if (body === null || body === undefined || body.trim() === '') return undefined;
  const text = isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;
  try {
    return JSON.parse(text);
  } catch {
    throw invalidField('message', 'The request body must be valid JSON.');
  }
};

/** The context once the body is parsed (undefined when the request had none). */
export type JsonBodyContext = ApiContext & { jsonBody: unknown };

/** The JSON body step of the request chain: a body is parsed only on a route that reads one (`readsBody` in ./route). */
export const jsonBody = (readsBody: boolean): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, JsonBodyContext> => ({
  before: (request) => {
    request.context.jsonBody = readsBody ? parseJsonBody(request.event) : undefined;
  },
});
