import { currentInvocation, observeInvocations } from '#local/invocation-scope';

/** Each local invocation's function, duration and log bytes, for the write recorder (docs/data-model-heat.md#how-it-is-measured). */

export const RECORD_LOGS_ENV = 'LOCAL_RECORD_LOGS';

/** An invocation: its function, id (awsRequestId), duration in ms and the bytes it wrote to stdout and stderr. */
export type InvocationRecord = {
  fn: string;
  invocation: string;
  ms: number;
  logBytes: number;
  ok: boolean;
};

type WriteCallback = (error?: Error | null) => void;
type Writable = { write: (chunk: string | Uint8Array, encoding?: BufferEncoding | WriteCallback, callback?: WriteCallback) => boolean };

/** A structured (JSON) line below ERROR: counted but not shown when the output is quiet. */
const belowError = (text: string) => text.trimStart().startsWith('{') && !/"level"\s*:\s*"(ERROR|CRITICAL|FATAL)"/.test(text);

/** Records every invocation that starts from now on; `quiet` hides its structured lines below ERROR. */
export const recordInvocations = (options: { quiet?: boolean; streams?: Writable[] } = {}) => {
  const streams = options.streams ?? [process.stdout as unknown as Writable, process.stderr as unknown as Writable];
  const running = new Map<string, { logBytes: number }>();
  const records: InvocationRecord[] = [];
  observeInvocations({
    started: (invocation) => running.set(invocation, { logBytes: 0 }),
    ended: ({ invocation, functionName, ms, ok }) => {
      const entry = running.get(invocation);
      running.delete(invocation);
      records.push({ fn: functionName, invocation, ms, logBytes: entry?.logBytes ?? 0, ok });
    },
  });
  const originals = streams.map((stream) => {
    const original = stream.write;
    stream.write = function (this: unknown, chunk, encoding, callback) {
      const invocation = currentInvocation();
      const entry = invocation === undefined ? undefined : running.get(invocation);
      if (entry) {
        entry.logBytes +=
          typeof chunk === 'string' ? Buffer.byteLength(chunk, typeof encoding === 'string' ? encoding : 'utf8') : chunk.byteLength;
        if (options.quiet && belowError(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'))) {
          const done = typeof encoding === 'function' ? encoding : callback;
          if (done) process.nextTick(done);
          return true;
        }
      }
      return original.call(this, chunk, encoding, callback);
    };
    return { stream, original };
  });
  return {
    /** The invocations that ended since the last drain. */
    drain: () => records.splice(0),
    /** Puts the streams' `write` back and stops observing (tests). */
    stop: () => {
      observeInvocations(undefined);
      for (const { stream, original } of originals) stream.write = original;
    },
  };
};

export type InvocationRecorder = ReturnType<typeof recordInvocations>;
