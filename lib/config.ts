import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import type { Stage } from '../shared/config';

/**
 * Deploy-time settings, read from CDK context (`cdk.json` or `-c key=value`). A key may be set for
 * one stage only as `<stage>.<key>` (e.g. `-c sandbox.mailFrom=sandbox@acme.example`), which wins
 * over the plain key. Every setting has a default so `cdk synth` works with no context at all; the
 * two that must be real for a working deployment (mailFrom, inviteLinkBaseUrl) warn when defaulted.
 */
export type StageConfig = {
  stage: Stage;
  /** The From address of every e-mail (MAIL_FROM). */
  mailFrom: string;
  /** The verified SES identity the address belongs to: the address itself or its domain. */
  sesIdentity: string;
  /** Base URL of the invitation links in invite e-mails (INVITE_LINK_BASE_URL). */
  inviteLinkBaseUrl: string;
  /** Optional e-mail subscribed to the alarm topic. */
  alarmEmail: string | undefined;
  /** API Gateway stage throttling (requests per second, burst). */
  throttle: { rateLimit: number; burstLimit: number };
  /** AWS WAF rate-based rule: requests per client IP per 5 minutes. */
  wafRateLimit: number;
  logRetention: RetentionDays;
  /** How long a function caches a resolved token (AUTH_CACHE_TTL_SECONDS). */
  authCacheTtlSeconds: number;
  /** p99 latency alarm threshold. */
  latencyP99Ms: number;
  /** Live: deletion protection and RETAIN on stateful resources. */
  retainData: boolean;
  /** Settings that fell back to a placeholder (reported as synth warnings). */
  defaulted: string[];
};

export const DEFAULT_MAIL_FROM = 'affiliates@example.com';
export const DEFAULT_INVITE_LINK_BASE_URL = 'https://dashboard.example.com/invitations';

const STAGE_DEFAULTS: Record<Stage, { rateLimit: number; burstLimit: number; wafRateLimit: number; logRetentionDays: number }> = {
  live: { rateLimit: 100, burstLimit: 200, wafRateLimit: 3000, logRetentionDays: 90 },
  sandbox: { rateLimit: 20, burstLimit: 40, wafRateLimit: 600, logRetentionDays: 14 },
};

const RETENTIONS = new Set<number>(Object.values(RetentionDays).filter((value): value is number => typeof value === 'number'));

export const readStageConfig = (node: Node, stage: Stage): StageConfig => {
  const defaulted: string[] = [];
  const raw = (key: string): unknown => node.tryGetContext(`${stage}.${key}`) ?? node.tryGetContext(key);
  const text = (key: string, fallback: string | undefined, warn = false): string | undefined => {
    const value = raw(key);
    if (value === undefined || value === null || value === '') {
      if (warn) defaulted.push(key);
      return fallback;
    }
    return String(value);
  };
  const number = (key: string, fallback: number, min = 1): number => {
    const value = raw(key);
    if (value === undefined || value === null || value === '') return fallback;
    const parsed = Number(value);
    if (!Number.isFinite(parsed) || parsed < min) throw new Error(`Context ${key} must be a number >= ${min}, got ${JSON.stringify(value)}`);
    return parsed;
  };
  const defaults = STAGE_DEFAULTS[stage];
  const mailFrom = text('mailFrom', DEFAULT_MAIL_FROM, true) as string;
  if (!/^[^@\s]+@[^@\s]+$/.test(mailFrom)) throw new Error(`Context mailFrom must be an e-mail address, got ${JSON.stringify(mailFrom)}`);
  const logRetention = number('logRetentionDays', defaults.logRetentionDays);
  if (!RETENTIONS.has(logRetention)) throw new Error(`Context logRetentionDays must be one of CloudWatch's values (${[...RETENTIONS].join(', ')})`);
  return {
    stage,
    mailFrom,
    sesIdentity: text('sesIdentity', mailFrom) as string,
    inviteLinkBaseUrl: text('inviteLinkBaseUrl', DEFAULT_INVITE_LINK_BASE_URL, true) as string,
    alarmEmail: text('alarmEmail', undefined),
    throttle: { rateLimit: number('throttleRateLimit', defaults.rateLimit), burstLimit: number('throttleBurstLimit', defaults.burstLimit) },
    wafRateLimit: number('wafRateLimit', defaults.wafRateLimit),
    logRetention: logRetention as RetentionDays,
    authCacheTtlSeconds: number('authCacheTtlSeconds', 30, 0),
    latencyP99Ms: number('latencyP99Ms', 2000),
    retainData: stage === 'live',
    defaulted,
  };
};
