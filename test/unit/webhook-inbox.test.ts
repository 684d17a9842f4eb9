import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { serveWebhookInbox } from '#local/webhook-inbox';
import { sealSecret } from '#shared/webhooks/secret-box';
import { ddbMock, resetAwsMocks } from './support/aws';
import { MERCHANT, MERCHANT_PK } from './support/fixtures';

/** The local webhook inbox against a mocked table: it verifies each delivery without reading the whole table for each. */
const ENDPOINT = '6a1d2c3b-4e5f-4a60-9b7c-8d9e0f1a2b3c';
const FIRST_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const ROTATED_SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';
const UNKNOWN_SECRET = 'whsec_dGhpcyBpcyBub3QgdGhlIGVuZHBvaW50J3M=';

const server = http.createServer((request, response) => {
  void serveWebhookInbox(request, new URL(request.url ?? '/', 'http://127.0.0.1'), response);
});
let base = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const endpointItem = async (secret: string) => ({
  pk: MERCHANT_PK,
  sk: `WEBHOOK#${ENDPOINT}`,
  type: 'webhook_endpoint',
  uuid: ENDPOINT,
  url: `${base}/webhook-inbox/shop`,
  description: null,
  events: [],
  enabled: true,
  disabled_reason: null,
  secret_box: await sealSecret(secret, MERCHANT.id, ENDPOINT),
  created_at: '2026-11-28T12:00:00.000Z',
  updated_at: '2026-11-28T12:00:00.000Z',
});

const deliver = async (secret: string, id: string) => {
  const body = JSON.stringify({ type: 'order.created', data: { id } });
  const at = new Date();
  const signature = new Webhook(secret).sign(id, at, body);
  const response = await fetch(`${base}/webhook-inbox/shop`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signature,
    },
    body,
  });
  return (await response.json()) as { verified: boolean };
};

describe('local webhook inbox', () => {
  beforeEach(() => resetAwsMocks());

  it('verifies repeated deliveries to one path with the endpoints it found the first time', async () => {
    // Prepare
    ddbMock.on(ScanCommand).resolves({ Items: [await endpointItem(FIRST_SECRET)] });

    // Act
    const answers = [await deliver(FIRST_SECRET, 'msg_1'), await deliver(FIRST_SECRET, 'msg_2'), await deliver(FIRST_SECRET, 'msg_3')];

    // Assess
    expect(answers.map((answer) => answer.verified)).toEqual([true, true, true]);
    expect(ddbMock.commandCalls(ScanCommand)).toHaveLength(1);
  });

  it('reads the endpoints again when a delivery does not verify with those it knows (a rotated secret)', async () => {
    // Prepare
    ddbMock.on(ScanCommand).resolves({ Items: [await endpointItem(FIRST_SECRET)] });
    await deliver(FIRST_SECRET, 'msg_4');
    ddbMock.on(ScanCommand).resolves({ Items: [await endpointItem(ROTATED_SECRET)] });

    // Act
    const answer = await deliver(ROTATED_SECRET, 'msg_5');

    // Assess
    expect(answer.verified).toBe(true);
  });

  it('does not verify a delivery signed with no secret of the endpoints, read fresh', async () => {
    // Prepare
    ddbMock.on(ScanCommand).resolves({ Items: [await endpointItem(FIRST_SECRET)] });

    // Act
    const answer = await deliver(UNKNOWN_SECRET, 'msg_6');

    // Assess
    expect(answer.verified).toBe(false);
    expect(ddbMock.commandCalls(ScanCommand)).toHaveLength(1);
  });
});
