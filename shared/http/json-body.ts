import type { APIGatewayProxyEvent } from 'aws-lambda';
import { invalidField } from '#shared/errors';

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
