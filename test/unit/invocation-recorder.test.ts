import { afterEach, describe, expect, it, vi } from 'vitest';
import { type InvocationRecorder, recordInvocations } from '#harness/recorders/invocation-recorder';
import { lambdaContext } from '#local/apigw';
import { enableInvocationScopes, invokeScoped } from '#local/invocation-scope';

/**
 * The bench's invocation recorder: each invocation of a local stage process with its function, its
 * duration and the bytes it wrote, even while others run beside it in the same process.
 */

const tick = (ms = 5) => new Promise((resolve) => setTimeout(resolve, ms));

const fakeStream = () => {
  const shown: string[] = [];
  return { shown, stream: { write: (chunk: string | Uint8Array) => shown.push(String(chunk)) > 0 } };
};

describe('local invocation recorder', () => {
  let recorder: InvocationRecorder | undefined;
  afterEach(() => {
    recorder?.stop();
    vi.unstubAllEnvs();
  });

  it('gives each invocation the bytes it wrote and how long it ran while two run at once', async () => {
    // Prepare
    vi.stubEnv('AWS_LAMBDA_MAX_CONCURRENCY', '64');
    enableInvocationScopes();
    const { stream, shown } = fakeStream();
    recorder = recordInvocations({ streams: [stream] });
    const run = (name: string, lines: string[], waitMs: number) => {
      const context = lambdaContext(name);
      return invokeScoped(context, async () => {
        for (const line of lines) {
          stream.write(line);
          await tick(waitMs);
        }
      });
    };

    // Act
    stream.write('outside any invocation\n');
    await Promise.all([run('orders-create', ['{"level":"INFO"}\n', 'é\n'], 10), run('change-feed', ['x\n'], 30)]);
    const records = recorder.drain();

    // Assess
    const byFunction = new Map(records.map((record) => [record.fn, record]));
    expect(records).toHaveLength(2);
    expect(byFunction.get('orders-create')?.logBytes).toBe(17 + 3);
    expect(byFunction.get('change-feed')?.logBytes).toBe(2);
    expect(byFunction.get('change-feed')?.ms).toBeGreaterThanOrEqual(25);
    expect(records.every((record) => record.ok)).toBe(true);
    expect(shown).toHaveLength(4);
    expect(recorder.drain()).toEqual([]);
  });

  it('counts but does not show an invocation’s structured lines below ERROR when quiet', async () => {
    // Prepare
    enableInvocationScopes();
    const { stream, shown } = fakeStream();
    recorder = recordInvocations({ quiet: true, streams: [stream] });
    const context = lambdaContext('commissions-process');

    // Act
    await invokeScoped(context, async () => {
      stream.write('{"level":"INFO","message":"done"}\n');
      stream.write('{"level":"ERROR","message":"failed"}\n');
      stream.write('{"_aws":{"CloudWatchMetrics":[]}}\n');
    });
    const [record] = recorder.drain();

    // Assess
    expect(shown).toEqual(['{"level":"ERROR","message":"failed"}\n']);
    expect(record?.logBytes).toBe(34 + 37 + 34);
  });
});
