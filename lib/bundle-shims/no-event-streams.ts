/**
 * Bundling shim, swapped in for `@smithy/core/event-streams` (esbuild alias, see lib/bundling.ts)
 * in deployed functions only.
 *
 * The SDK's HTTP protocol loads event-stream support (a dynamic import, which esbuild inlines into
 * a single-file bundle) only for operations that stream events (Bedrock, Transcribe, S3 Select,
 * ...). No DynamoDB, SQS or SES operation does, yet the codec is about 15 KB of every minified
 * bundle. Should an operation ever need it, it fails loudly here instead of silently misbehaving.
 */
const unsupported = (): never => {
  throw new Error('Event streams are not bundled into this function (lib/bundle-shims/no-event-streams.ts)');
};

export class EventStreamSerde {
  constructor() {
    unsupported();
  }
}

export const eventStreamSerdeProvider = unsupported;
