/**
 * Bundling shim, swapped in for `@smithy/core/event-streams` (esbuild alias, lib/bundling.ts) in
 * deployed functions only: no DynamoDB, SQS or SES operation streams events, yet esbuild inlines the
 * codec into every bundle (lib/README.md#functions). Should an operation ever need it, it fails
 * loudly here instead of silently misbehaving.
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
