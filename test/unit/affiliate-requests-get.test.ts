import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { handler as getRequest } from '#functions/affiliate-requests/get';
import { apiEvent, expectV2Error, invoke } from './support/api';
import { ddbMock, resetAwsMocks } from './support/aws';
import { REQUEST_KEY, REQUEST_UUID, storedPendingRequest, stubAuth, TOKENS } from './support/fixtures';

const get = (uuid: string) => invoke(getRequest, apiEvent('affiliate-requests-get', { token: TOKENS.live, pathParameters: { uuid } }));

beforeEach(() => {
  resetAwsMocks();
  stubAuth();
});

describe('GET /api/v2/affiliate-requests/{uuid}', () => {
  it('reads the request consistently, so it shows an accept or decline that has just answered', async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: REQUEST_KEY }).resolves({ Item: storedPendingRequest({ status: 'declined' }) });

    // Act
    const response = await get(REQUEST_UUID);

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.body.data.affiliate_request).toMatchObject({ uuid: REQUEST_UUID, status: 'declined' });
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { Key: REQUEST_KEY, ConsistentRead: true });
  });

  it('answers 404 for a request of no merchant or another', async () => {
    // Act
    const response = await get(REQUEST_UUID);

    // Assess
    expectV2Error(response, 404, { message: ['Not Found'] });
  });
});
