import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { getXrayTraceDataFromEnv } from '@aws-lambda-powertools/commons/utils/env';
import { HttpRequest } from '@smithy/core/transport';
import type { BuildMiddleware, MetadataBearer, MiddlewareStack, ResponseMetadata } from '@smithy/types';
import { classifyDependencyError } from '#shared/dependency-errors';

// X-Ray subsegments for a sampled invocation's AWS SDK calls (docs/design-notes.md#libraries-and-hand-written-code).

type TraceData = { Root?: string; Parent?: string; Sampled?: string };

type SdkError = Error & { $fault?: 'client' | 'server'; $metadata?: ResponseMetadata };

/** Any SDK v3 client: its middleware stack takes a build-step middleware for every command. */
export type SdkClient = { middlewareStack: Pick<MiddlewareStack<object, MetadataBearer>, 'add'> };

/** The daemon's UDP address: `host:port`, or `udp:host:port tcp:host:port` (Lambda sets it). */
export const daemonAddress = (value = process.env.AWS_XRAY_DAEMON_ADDRESS): { host: string; port: number } | undefined => {
  const udp =
    value
      ?.split(/\s+/)
      .find((part) => part.startsWith('udp:'))
      ?.slice(4) ?? value?.split(/\s+/)[0];
  const [, host, port] = udp?.match(/^(.+):(\d+)$/) ?? [];
  return host ? { host, port: Number(port) } : undefined;
};

let socket: Socket | undefined;

const send = (document: Record<string, unknown>) => {
  const address = daemonAddress();
  if (!address) return;
  if (!socket) {
    socket = createSocket('udp4');
    socket.unref();
  }
  // Fire and forget, like the X-Ray SDK: tracing never fails or slows a request.
  socket.send(`{"format":"json","version":1}\n${JSON.stringify(document)}`, address.port, address.host, () => undefined);
};

/** "DynamoDBClient" -> "DynamoDB", the name X-Ray's service map gives the AWS resource. */
const serviceName = (clientName = 'AWS') => clientName.replace(/Client$/, '').replace(/^DynamoDBDocument$/, 'DynamoDB');

/** Throttling as the SDK's retry strategy and DynamoDB's transaction cancellations say it. */
const isThrottle = (error: SdkError, status: number | undefined) => status === 429 || classifyDependencyError(error) === 'throttled';

const middleware: BuildMiddleware<object, MetadataBearer> = (next, context) => async (args) => {
  const trace = getXrayTraceDataFromEnv() as TraceData | undefined;
  if (!trace?.Root || !trace.Parent || trace.Sampled !== '1' || !daemonAddress()) return next(args);
  const id = randomBytes(8).toString('hex');
  if (HttpRequest.isInstance(args.request)) args.request.headers['X-Amzn-Trace-Id'] = `Root=${trace.Root};Parent=${id};Sampled=1`;
  const started = Date.now();
  const subsegment = (metadata: ResponseMetadata | undefined, failure?: SdkError) => {
    const status = metadata?.httpStatusCode;
    const input = args.input;
    send({
      id,
      trace_id: trace.Root,
      parent_id: trace.Parent,
      type: 'subsegment',
      name: serviceName(context.clientName),
      namespace: 'aws',
      start_time: started / 1000,
      end_time: Date.now() / 1000,
      aws: {
        operation: (context.commandName ?? '').replace(/Command$/, ''),
        region: process.env.AWS_REGION,
        request_id: metadata?.requestId,
        retries: Math.max(0, (metadata?.attempts ?? 1) - 1),
        ...('TableName' in input && typeof input.TableName === 'string' ? { table_name: input.TableName } : {}),
        ...('QueueUrl' in input && typeof input.QueueUrl === 'string' ? { queue_url: input.QueueUrl } : {}),
      },
      ...(status ? { http: { response: { status } } } : {}),
      ...(failure
        ? {
            ...(isThrottle(failure, status)
              ? { throttle: true, error: true }
              : failure.$fault === 'client'
                ? { error: true }
                : { fault: true }),
            // The error's name only: SES messages can quote addresses.
            cause: { exceptions: [{ id: randomBytes(8).toString('hex'), type: failure.name, remote: true }] },
          }
        : {}),
    });
  };
  try {
    const result = await next(args);
    subsegment(result.output.$metadata);
    return result;
  } catch (error) {
    subsegment((error as SdkError).$metadata, error as SdkError);
    throw error;
  }
};

/** Adds the X-Ray subsegment middleware to an SDK v3 client (once); returns the client. */
export const traceAwsClient = <T extends SdkClient>(client: T): T => {
  client.middlewareStack.add(middleware, { step: 'build', name: 'merchantApiXRaySubsegments', tags: ['TRACING'] });
  return client;
};
