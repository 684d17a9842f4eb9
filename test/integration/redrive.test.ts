import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { drainQueue, sqsClient, stack } from './helpers';

/**
 * `npm run admin -- redrive` against the SQS emulator, as a separate process like an operator runs
 * it. fauxqs has no message-move tasks (StartMessageMoveTask is an unknown action there), so this
 * exercises the receive/send/delete fallback end to end; the message-move-task path is covered by
 * test/unit/admin-redrive.test.ts against the mocked SDK. Uses the sandbox queues, drained first.
 */
const ROOT = resolve(import.meta.dirname, '..', '..');
const { dlqUrl, ordersQueueUrl } = stack.stages.sandbox;

const runRedrive = (...args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      SQS_PORT: new URL(stack.endpoints.sqs).port,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    };
    delete env.SEED_TABLE_NAME;
    execFile(process.execPath, ['--import', 'tsx', 'bin/admin.ts', 'redrive', ...args], { cwd: ROOT, env }, (error, stdout, stderr) =>
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });

beforeAll(async () => {
  await drainQueue(dlqUrl);
  await drainQueue(ordersQueueUrl);
});

describe('admin redrive', () => {
  it("moves every message of the stage's DLQ back to its orders queue, bodies unchanged, and empties the DLQ", async () => {
    // Prepare: what the consumer gave up on, 12 messages (more than one receive batch).
    const bodies = Array.from({ length: 12 }, () => ({ type: 'order.created', merchant_id: randomUUID(), order_uuid: randomUUID() }));
    for (const body of bodies) await sqsClient.send(new SendMessageCommand({ QueueUrl: dlqUrl, MessageBody: JSON.stringify(body) }));

    // Act
    const result = await runRedrive('--stage', 'sandbox');

    // Assess
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ stage: 'sandbox', method: 'receive-send-delete', moved: 12 });
    const moved = await drainQueue(ordersQueueUrl);
    expect(moved.map((body) => body.order_uuid).sort()).toEqual(bodies.map((body) => body.order_uuid).sort());
    expect(moved).toEqual(expect.arrayContaining(bodies));
    expect(await drainQueue(dlqUrl)).toEqual([]);
  });

  it('reports an empty DLQ as nothing moved', async () => {
    // Act
    const result = await runRedrive('--stage', 'sandbox');

    // Assess
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ stage: 'sandbox', method: 'receive-send-delete', moved: 0 });
  });
});
