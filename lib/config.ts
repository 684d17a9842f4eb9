import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import type { Stage } from '#shared/config';
import { RATE_LIMIT } from '#shared/rate-limit';

/** Deploy-time settings, read from CDK context; each key is described in lib/README.md#deploy. */
export type StageConfig = ReturnType<typeof readStageConfig>;

/** A context setting that cannot be used: bin/app.ts prints its message as one line and exits 1. */
export class ContextError extends Error {
  override name = 'ContextError';
}

/** Why the live stage refuses to synthesize without somewhere to send its alarms. */
export const missingAlarmDestination = (stage: Stage) =>
  `The ${stage} stage needs an alarm destination: pass -c alarmEmail=<address> or -c alarmTopicArn=<SNS topic ARN> (or ${stage}.alarmEmail / ${stage}.alarmTopicArn), on every cdk command (the app builds both stages).`;

export const DEFAULT_MAIL_FROM = 'affiliates@example.com';
/** Triggered functions start no traces of their own unless a stage is told to (the bench prices the default). */
export const DEFAULT_TRACE_WORKERS = false;
export const DEFAULT_INVITE_LINK_BASE_URL = 'https://dashboard.example.com/invitations';

/** Per client IP, twice one token's limit, so merchants behind one egress IP are not throttled together (lib/README.md#rate-limits). */
export const DEFAULT_WAF_IP_RATE_LIMIT = RATE_LIMIT.requestsPer5Minutes * 2;

/** Both stages' throttle: four times what one IP may send past WAF, under the account's limit (lib/README.md#rate-limits). */
const STAGE_THROTTLE = (4 * DEFAULT_WAF_IP_RATE_LIMIT) / 300;

const throttle = { rateLimit: STAGE_THROTTLE, burstLimit: STAGE_THROTTLE };
/** What each stage gets when its context does not say (the heat bench prices the live stage's log retention from it). */
export const STAGE_DEFAULTS = {
  live: { ...throttle, logRetentionDays: 90, ownsApiGatewayAccount: true, requireAlarmDestination: true },
  sandbox: { ...throttle, logRetentionDays: 14, ownsApiGatewayAccount: false, requireAlarmDestination: false },
} satisfies Record<Stage, unknown>;

const EMAIL: [RegExp, string] = [/^[^@\s]+@[^@\s]+$/, 'an e-mail address'];
const SNS_TOPIC_ARN: [RegExp, string] = [/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/, 'an SNS topic ARN'];

const RETENTIONS = new Set<number>(Object.values(RetentionDays).filter((value): value is number => typeof value === 'number'));

export const readStageConfig = (node: Node, stage: Stage) => {
  const defaulted: string[] = [];
  // A value of null or '' is not set.
  const raw = (key: string): unknown => {
    const value = node.tryGetContext(`${stage}.${key}`) ?? node.tryGetContext(key);
    return value === null || value === '' ? undefined : value;
  };
  /** A text setting; `shape` (a pattern and what it means) checks the value, given or not. */
  const text = (key: string, fallback: string | undefined, warn = false, shape?: [RegExp, string]): string | undefined => {
    const value = raw(key);
    if (value === undefined && warn) defaulted.push(key);
    const result = value === undefined ? fallback : String(value);
    if (result !== undefined && shape && !shape[0].test(result))
      throw new ContextError(`Context ${key} must be ${shape[1]}, got ${JSON.stringify(result)}`);
    return result;
  };
  const number = (key: string, fallback: number, min = 1): number => {
    const value = raw(key);
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!Number.isFinite(parsed) || parsed < min)
      throw new ContextError(`Context ${key} must be a number >= ${min}, got ${JSON.stringify(value)}`);
    return parsed;
  };
  const flag = (key: string, fallback: boolean): boolean => {
    const value = raw(key);
    if (value === undefined) return fallback;
    if (value === true || value === 'true') return true;
    if (value === false || value === 'false') return false;
    throw new ContextError(`Context ${key} must be true or false, got ${JSON.stringify(value)}`);
  };
  const defaults = STAGE_DEFAULTS[stage];
  const mailFrom = text('mailFrom', DEFAULT_MAIL_FROM, true, EMAIL) as string;
  const alarmEmail = text('alarmEmail', undefined, false, EMAIL);
  const alarmTopicArn = text('alarmTopicArn', undefined, false, SNS_TOPIC_ARN);
  if (defaults.requireAlarmDestination && !alarmEmail && !alarmTopicArn) throw new ContextError(missingAlarmDestination(stage));
  const logRetention = number('logRetentionDays', defaults.logRetentionDays);
  if (!RETENTIONS.has(logRetention))
    throw new ContextError(`Context logRetentionDays must be one of CloudWatch's values (${[...RETENTIONS].join(', ')})`);
  return {
    stage,
    mailFrom,
    sesIdentity: text('sesIdentity', mailFrom) as string,
    inviteLinkBaseUrl: text('inviteLinkBaseUrl', DEFAULT_INVITE_LINK_BASE_URL, true) as string,
    alarmEmail,
    alarmTopicArn,
    throttle: { rateLimit: number('throttleRateLimit', defaults.rateLimit), burstLimit: number('throttleBurstLimit', defaults.burstLimit) },
    wafIpRateLimit: number('wafIpRateLimit', DEFAULT_WAF_IP_RATE_LIMIT, 10),
    ownsApiGatewayAccount: flag('apiGatewayAccount', defaults.ownsApiGatewayAccount),
    logRetention: logRetention as RetentionDays,
    authCacheTtlSeconds: number('authCacheTtlSeconds', 30, 0),
    latencyP99Ms: number('latencyP99Ms', 2000),
    traceWorkers: flag('traceWorkers', DEFAULT_TRACE_WORKERS),
    retainData: stage === 'live',
    defaulted,
  };
};
