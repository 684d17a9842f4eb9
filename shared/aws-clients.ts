import { type SdkClient, traceAwsClient } from '#shared/tracing';

export type AwsService = 'dynamodb' | 'sqs' | 'ses';

type ClientHook = (client: SdkClient, service: AwsService) => void;

const hooks: ClientHook[] = [];

/** Lets the local stack add middleware (fault injection) to every client the functions build; register before they load. */
export const onClientCreated = (hook: ClientHook): void => {
  hooks.push(hook);
};

/** Every SDK client of the functions is built through here: X-Ray subsegments, then the hooks. */
export const instrumentClient = <T extends SdkClient>(service: AwsService, client: T): T => {
  traceAwsClient(client);
  for (const hook of hooks) hook(client, service);
  return client;
};
