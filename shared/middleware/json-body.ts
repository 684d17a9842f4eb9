import { invalidField } from '../errors';
import type { ApiMiddleware } from './types';

/** Parses a JSON body; malformed JSON is a 422 envelope, never a 500. */
export const jsonBody = (): ApiMiddleware => ({
  before: (request) => {
    const { body, isBase64Encoded } = request.event;
    if (body === null || body === undefined || body.trim() === '') return;
    const text = isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;
    try {
      request.context.jsonBody = JSON.parse(text);
    } catch {
      throw invalidField('message', 'The request body must be valid JSON.');
    }
  },
});
