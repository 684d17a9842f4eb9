import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { LOCAL_MAIL_DEFAULTS, localInviteLinkBase } from '#local/aws-env';
import { sentEmails, stack } from './helpers';

/** What the local stack gives its functions when the environment does not say (local/stack.ts). */
export const MAIL_FROM = process.env.MAIL_FROM ?? LOCAL_MAIL_DEFAULTS.MAIL_FROM;
/** The local invitation e-mails link to the live stage's own port (its landing page). */
export const INVITE_LINK_BASE_URL = process.env.INVITE_LINK_BASE_URL ?? localInviteLinkBase(Number(new URL(stack.stages.live.url).port));

/** An address no other test uses, so the shared SES store can be searched by recipient. */
export const uniqueEmail = (name = 'someone') => `${name}.${randomUUID().slice(0, 8)}@example.com`;

export type StoredEmail = Awaited<ReturnType<typeof sentEmails>>[number] & { replyTo?: string[] };

/** The e-mails the SES emulator holds for one recipient. */
export const mailsTo = async (address: string): Promise<StoredEmail[]> =>
  (await sentEmails()).filter((email) => email.destination.to.includes(address)) as StoredEmail[];

const ROOT = resolve(import.meta.dirname, '..', '..');
const portOf = (endpoint: string) => new URL(endpoint).port;

/** Runs `npm run admin -- ...args` against the test stack; never throws on a non-zero exit. */
export const runAdmin = (...args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string; json: any }>((done) => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DYNAMODB_PORT: portOf(stack.endpoints.dynamodb),
      SES_PORT: portOf(stack.endpoints.ses),
      SQS_PORT: portOf(stack.endpoints.sqs),
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    };
    delete env.SEED_TABLE_NAME;
    execFile(process.execPath, ['--import', 'tsx', 'bin/admin.ts', ...args], { cwd: ROOT, env }, (error, stdout, stderr) => {
      const code = error ? ((error as { code?: number }).code ?? 1) : 0;
      let json: unknown;
      try {
        json = stdout.trim() ? JSON.parse(stdout) : undefined;
      } catch {
        json = undefined;
      }
      done({ code, stdout, stderr, json });
    });
  });
