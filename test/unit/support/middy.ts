/** A middy request for calling one middleware's hooks directly. */
import type { Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { ApiContext } from '../../../shared/middleware/types';
import { lambdaContext } from './api';

export type ApiRequest = Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext>;

export const middyRequest = (event: APIGatewayProxyEvent, context: Partial<ApiContext> = {}): ApiRequest => ({
  event,
  context: { ...lambdaContext(), traceId: '2026-03-01T10:00:00Z:api:0badc0de', ...context },
  response: null,
  error: null,
  internal: {},
});
