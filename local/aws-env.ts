/** What a client (the operator commands, bin/invoke.ts, the tests) needs to reach the local stack, and nothing that starts it. */

/** Credentials and region the emulators accept (no AWS account is involved), and no SDK version nag. */
export const LOCAL_AWS_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
} as const;

/** For this process's own SDK clients (seed, stack set-up). */
export const useLocalAwsEnv = () => {
  for (const [name, value] of Object.entries(LOCAL_AWS_ENV)) process.env[name] ??= value;
};

/** Region and credentials for an SDK client of the emulators. */
export const localClientConfig = {
  region: LOCAL_AWS_ENV.AWS_REGION,
  credentials: { accessKeyId: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY },
};

/** Where the local invitation e-mails link: the landing page of the live stage on its port (local/docs.ts). */
export const localInviteLinkBase = (livePort: number) => `http://localhost:${livePort}/invitations`;

/** Seals the local stack's webhook secrets (deployed stages read their key from Secrets Manager). Local data only. */
export const LOCAL_WEBHOOK_KEY = 'local-webhook-key-not-a-secret';

/** The mail settings of the local stages, unless MAIL_FROM / INVITE_LINK_BASE_URL are set (the live stage on its default port). */
export const LOCAL_MAIL_DEFAULTS = {
  MAIL_FROM: 'affiliates@merchant-api.local',
  INVITE_LINK_BASE_URL: localInviteLinkBase(3000),
} as const;
