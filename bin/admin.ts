/** `npm run admin -- <command> [options]`: what the merchant dashboard and the payment side do outside this API (COMMANDS, `--help`). */
import './sdk-env';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { workers } from '#functions/workers';
import { LOCAL_MAIL_DEFAULTS, localClientConfig, localInviteLinkBase } from '#local/aws-env';
import { runningStackPorts } from '#local/ports';
import {
  AdminError,
  applyForProgram,
  commissionOfOrder,
  linkPayment,
  markInviteUsed,
  mintToken,
  recountLists,
  redriveDeadLetters,
  resendNotifications,
  revokeToken,
} from '#shared/admin/operations';
import { listParked, replayParked } from '#shared/admin/parked';
import { setMerchantQuota } from '#shared/admin/quota';
import { checkTotalsAgainstLedgers, rebuildClosedTotals, reportCsv, reportRows } from '#shared/admin/report';
import type { Store } from '#shared/admin/store';
import { listWebhookDeliveries, listWebhookEndpoints, replayWebhookDeliveries } from '#shared/admin/webhooks';
import { parseStage, requireEnv, type Stage } from '#shared/config';
import { QUEUES, type QueueId, queueNameForStage } from '#shared/db/table-def';
import { sendDeliveries } from '#shared/queue/webhooks';
import { stageOfToken, stageOfTokenKind, tokenKindOfStage } from '#shared/tokens';
import { resolveStore, targetStage, useFunctionEnv } from './target';

/** How long a warm function keeps trusting a resolved token (AUTH_CACHE_TTL_SECONDS): a revoked one works that much longer. */
const authCacheTtlSeconds = () => {
  const value = Number(process.env.AUTH_CACHE_TTL_SECONDS ?? '30');
  return Number.isFinite(value) && value >= 0 ? value : 30;
};

/** A string option's value, if given. */
const option = (values: Values, name: string) => {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
};

const required = (values: Values, name: string): string => {
  const value = option(values, name);
  if (value === undefined || value.trim() === '') throw new AdminError(`--${name} is required`);
  return value;
};

/** A command on the stage's store with its required options, read first, under their keys (`--merchant` as `merchantId`). */
const onStore =
  <K extends string>(names: Record<K, string>, operate: (store: Store, options: Record<K, string>) => Promise<Record<string, unknown>>) =>
  (values: Values, stage: Stage) => {
    const options = Object.fromEntries(Object.entries<string>(names).map(([key, name]) => [key, required(values, name)]));
    return operate(resolveStore(stage), options as Record<K, string>);
  };

let sqsClient: SQSClient | undefined;
/** The operator's SQS client: the local emulator, or AWS when a deployed stage is targeted (SEED_TABLE_NAME). */
const operatorSqs = () =>
  (sqsClient ??= process.env.SEED_TABLE_NAME
    ? new SQSClient({})
    : new SQSClient({ endpoint: `http://127.0.0.1:${runningStackPorts().sqs}`, useQueueUrlAsEndpoint: false, ...localClientConfig }));

const queueUrlOf = async (stage: Stage, queue: QueueId) => {
  const QueueName = queueNameForStage(stage, queue);
  const { QueueUrl } = await operatorSqs().send(new GetQueueUrlCommand({ QueueName }));
  if (!QueueUrl) throw new AdminError(`queue ${QueueName} not found`);
  return QueueUrl;
};

/** The notification relay (shared/mail/relay.ts), loaded with the environment a function of the stage has. */
const notificationRelay = async (stage: Stage) => {
  useFunctionEnv(stage);
  if (!process.env.SEED_TABLE_NAME) {
    process.env.AWS_ENDPOINT_URL_SES ??= `http://127.0.0.1:${runningStackPorts().ses}`;
    process.env.INVITE_LINK_BASE_URL ??= localInviteLinkBase(runningStackPorts().live);
    for (const [name, value] of Object.entries(LOCAL_MAIL_DEFAULTS)) process.env[name] ??= value;
  }
  requireEnv('MAIL_FROM');
  requireEnv('INVITE_LINK_BASE_URL');
  return (await import('#shared/mail/relay')).relayPendingNotifications;
};

/** The change feed's own code, with the environment its function has on `stage`, so a replayed record gets the same reactions. */
const changeFeed = async (stage: Stage) => {
  useFunctionEnv(stage);
  for (const queue of workers.find((worker) => worker.id === 'change-feed')?.access.sends ?? []) {
    process.env[QUEUES[queue].envVar] = await queueUrlOf(stage, queue);
  }
  if (!process.env.SEED_TABLE_NAME) process.env.AWS_ENDPOINT_URL_SQS ??= `http://127.0.0.1:${runningStackPorts().sqs}`;
  return (await import('#functions/changes/feed')).processChangeRecords;
};

type Values = Record<string, string | boolean | undefined>;

type Command = {
  /** Its options (`--name <value>` takes a value, a bare `--name` is a switch) and what it does, for `--help`. */
  options: string;
  does: string;
  /** The stage its options imply: a token names its stage, and so does the kind of one to mint. */
  implies?: (values: Values) => Stage | undefined;
  /** A command whose options start with its actions (`list|replay`): the rest of the usage line a wrong or missing one is answered with. */
  actions?: string;
  /** Prints what `run` returns as it is, not after the stage. */
  withoutStage?: true;
  /** What it does, given its options, the stage it targets and its action. */
  run: (values: Values, stage: Stage, action?: string) => Promise<Record<string, unknown>>;
};

const COMMANDS: Record<string, Command> = {
  'mint-token': {
    options: '--merchant <id> [--kind live|testing] [--no-live-orders] [--label <text>]',
    does: 'Creates an API token for the merchant and prints it (once: only its hash is stored).',
    implies: (values) => (values.kind === 'testing' ? stageOfTokenKind(values.kind) : undefined),
    run: async (values, stage) => {
      const kind = option(values, 'kind');
      if (kind !== undefined && kind !== 'live' && kind !== 'testing') throw new AdminError('--kind must be live or testing');
      if (kind !== undefined && kind !== tokenKindOfStage(stage))
        throw new AdminError(`a ${kind} token is accepted by the ${stageOfTokenKind(kind)} stage only, not ${stage}`);
      return mintToken(resolveStore(stage), stage, {
        merchantId: required(values, 'merchant'),
        kind,
        canPlaceLiveOrders: !values['no-live-orders'],
        label: option(values, 'label'),
      });
    },
  },
  'revoke-token': {
    options: '--token <token>',
    does: "Revokes a token; warm functions may accept it for up to AUTH_CACHE_TTL_SECONDS more. The stage defaults to the one that takes the token's kind.",
    implies: (values) => stageOfToken(required(values, 'token')),
    run: async (values, stage) => {
      const revoked = await revokeToken(resolveStore(stage), required(values, 'token'));
      const ttl = authCacheTtlSeconds();
      return {
        ...revoked,
        // Functions cache a resolved token (auth middleware): say so, with the moment it is certainly refused.
        refused_everywhere_by: new Date(Date.parse(revoked.revoked_at) + ttl * 1000).toISOString(),
        note: `Warm functions may still accept this token for up to ${ttl} s after revoked_at (AUTH_CACHE_TTL_SECONDS, their token cache).`,
      };
    },
  },
  apply: {
    options: '--merchant <id> --slug <slug> --name <name> --email <email>',
    does: 'Files a pending affiliate request, as an affiliate applying to the program would.',
    run: onStore({ merchantId: 'merchant', slug: 'slug', name: 'name', email: 'email' }, applyForProgram),
  },
  'mark-invite-used': {
    options: '--merchant <id> --invite <uuid>',
    does: "Sets the invitation's link_used_at, as the dashboard does.",
    run: onStore({ merchantId: 'merchant', inviteUuid: 'invite' }, markInviteUsed),
  },
  'link-payment': {
    options: '--merchant <id> --order <uuid> --payment <id>',
    does: 'Links an order to a payment: it can no longer be cancelled.',
    run: onStore({ merchantId: 'merchant', orderUuid: 'order', paymentId: 'payment' }, linkPayment),
  },
  'resend-notifications': {
    options: '--merchant <id> [--older-than <seconds>]',
    does: 'Sends the e-mails owed for longer than --older-than (default 60), parked ones included.',
    run: async (values, stage) => {
      const olderThanSeconds = Number(values['older-than'] ?? '60');
      if (!Number.isFinite(olderThanSeconds) || olderThanSeconds < 0)
        throw new AdminError('--older-than must be a number of seconds, 0 or more');
      const options = { merchantId: required(values, 'merchant'), olderThanSeconds };
      return resendNotifications(resolveStore(stage), await notificationRelay(stage), options);
    },
  },
  redrive: {
    options: '',
    does: "Moves the orders DLQ's messages back to the orders queue (after fixing what made them fail).",
    run: async (_values, stage) =>
      redriveDeadLetters({
        sqs: operatorSqs(),
        dlqUrl: await queueUrlOf(stage, 'orders-dlq'),
        ordersQueueUrl: await queueUrlOf(stage, 'orders'),
      }),
  },
  commission: {
    options: '--merchant <id> --order <uuid>',
    does: "Prints the order's commission ledger: {order_uuid, status, net_amount, currency_code, entries}, without `stage`.",
    withoutStage: true,
    run: onStore({ merchantId: 'merchant', orderUuid: 'order' }, commissionOfOrder),
  },
  report: {
    options:
      '--merchant <id> [--from <YYYY-MM-DD>] [--to <YYYY-MM-DD>] [--group-by affiliate|month|day|affiliate,month|affiliate,day] [--affiliate <slug>] [--format json|csv]',
    does: 'Prints the commission report of GET /api/v2/reports/commissions, every row (default: the current month by affiliate); --format csv prints the rows as CSV with a header line, for the payout run.',
    run: async (values, stage) => {
      if (values.format !== undefined && values.format !== 'json' && values.format !== 'csv')
        throw new AdminError('--format is json or csv');
      const report = await reportRows(resolveStore(stage), required(values, 'merchant'), {
        from: option(values, 'from'),
        to: option(values, 'to'),
        group_by: option(values, 'group-by'),
        affiliate_slug: option(values, 'affiliate'),
      });
      return values.format === 'csv' ? { csv: reportCsv(report.rows, report.group_by) } : report;
    },
  },
  'check-totals': {
    options: '--merchant <id>',
    does: "Checks the merchant's report totals (day and month, per affiliate) against what its commission ledgers add up to and prints {merchant_id, ledgers, differences}: none when they agree. The current day may differ while the change feed is catching up; a closed period that differs is repaired by rebuild-totals.",
    run: (values, stage) => checkTotalsAgainstLedgers(resolveStore(stage), required(values, 'merchant')),
  },
  'rebuild-totals': {
    options: '--merchant <id>',
    does: "Rebuilds the merchant's report totals of every closed day and month from its commission ledgers (ledgers written before the totals existed; a repair after the check found a difference) and prints how many items it wrote and removed. Run it again once the current month has closed.",
    run: (values, stage) => rebuildClosedTotals(resolveStore(stage), required(values, 'merchant')),
  },
  recount: {
    options: '--merchant <id>',
    does: 'Recounts every list total of the merchant from the list indexes and prints what it corrected; a block changed in the last 10 s is marked instead (marked_for_later), and the change feed recounts it a minute later.',
    run: (values, stage) => recountLists(resolveStore(stage), required(values, 'merchant')),
  },
  quota: {
    options: '--merchant <id> (--rate <per second> --burst <n> | --reset)',
    does: "Sets the merchant's request quota on the stage (sustained rate and burst, 1 to 10000), or --reset to the stage's default; functions take it within a second. Prints the quota in effect.",
    run: async (values, stage) => {
      const options = {
        merchantId: required(values, 'merchant'),
        reset: values.reset === true,
        rate: option(values, 'rate'),
        burst: option(values, 'burst'),
      };
      return setMerchantQuota(resolveStore(stage), stage, options);
    },
  },
  parked: {
    options: 'list|replay [--limit <n>]',
    does: 'list: up to --limit (default 100) parked messages (change records, follow-ups) with why they were parked. replay: runs up to --limit parked change records through the change feed again, in stream order (the later records of a merchant stay parked once one fails again), and puts parked follow-ups back on their queue; what fails again stays parked.',
    actions: '[--limit <n>]',
    run: async (values, stage, action) => {
      const limit = Number(values.limit ?? '100');
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new AdminError('--limit must be a whole number from 1 to 1000');
      const target = {
        sqs: operatorSqs(),
        parkedUrl: await queueUrlOf(stage, 'parked'),
        followUpsUrl: await queueUrlOf(stage, 'follow-ups'),
        store: resolveStore(stage),
      };
      if (action === 'list') return listParked(target, limit);
      return replayParked(target, await changeFeed(stage), limit);
    },
  },
  webhooks: {
    options: 'list|deliveries|replay --merchant <id> [--endpoint <uuid>] [--limit <n>] [--event <id>] [--since <iso time>]',
    does: "list: the merchant's webhook endpoints. deliveries: an endpoint's latest --limit (default 20) deliveries. replay: one delivery (--event) or every failed one since --since (default 14 days back) sent again.",
    actions: '--merchant <id> ...',
    run: async (values, stage, action) => {
      const store = resolveStore(stage);
      const merchantId = required(values, 'merchant');
      if (action === 'list') return listWebhookEndpoints(store, merchantId);
      const endpointUuid = required(values, 'endpoint');
      if (action === 'deliveries') {
        const limit = Number(values.limit ?? '20');
        if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new AdminError('--limit must be a whole number from 1 to 100');
        return listWebhookDeliveries(store, { merchantId, endpointUuid, limit });
      }
      const options = { merchantId, endpointUuid, eventId: option(values, 'event'), since: option(values, 'since') };
      const queueUrl = await queueUrlOf(stage, 'webhooks');
      return replayWebhookDeliveries(store, (messages) => sendDeliveries(store, messages, { queueUrl, client: operatorSqs() }), options);
    },
  },
};

/** The options the commands' usage names, with --stage and --help. */
const OPTIONS: ParseArgsConfig['options'] = {
  ...Object.fromEntries(
    Object.values(COMMANDS).flatMap(({ options }) =>
      [...options.matchAll(/--([a-z-]+)( [^-|])?/g)].map(([, name, value]) => [name, { type: value ? 'string' : 'boolean' }]),
    ),
  ),
  stage: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

const TARGET = `Target: the running local stack (npm start), or a deployed stage when SEED_TABLE_NAME is set
(AWS credentials and region from the environment; resend-notifications also MAIL_FROM and
INVITE_LINK_BASE_URL). A deployed stage's operator permissions are its OperatorPolicyArn output.
--stage defaults to the one a command's token implies, else the stage of SEED_TABLE_NAME's table,
else live; a stage that contradicts that table is refused.
Prints one JSON object on stdout (report --format csv: CSV); a failure is one line on stderr and exit code 1.`;

const USAGE = `usage: npm run --silent admin -- <command> [options] [--stage live|sandbox]

commands:
${Object.entries(COMMANDS)
  .map(([name, { does }]) => `  ${name.padEnd(21)}${does}`)
  .join('\n')}

\`npm run --silent admin -- <command> --help\` shows a command's options.
${TARGET}`;

const commandUsage = (name: string, { options, does }: Command) =>
  `usage: npm run --silent admin -- ${name} ${options}${options ? ' ' : ''}[--stage live|sandbox]

${does}

${TARGET}`;

const run = async (): Promise<Record<string, unknown>> => {
  const { values, positionals }: { values: Values; positionals: string[] } = parseArgs({ allowPositionals: true, options: OPTIONS });
  const [name, ...extra] = positionals;
  const command = name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (values.help) {
    console.log(name && command ? commandUsage(name, command) : USAGE);
    process.exit(0);
  }
  // A command with actions takes exactly one (`webhooks list`), the others no word after their name.
  const [action, ...more] = extra;
  const actions = command?.actions === undefined ? undefined : command.options.split(' ')[0];
  if (actions && (!actions.split('|').includes(action ?? '') || more.length > 0))
    throw new AdminError(`usage: npm run --silent admin -- ${name} ${actions} ${command?.actions}`);
  if (!name || (!actions && extra.length > 0)) throw new AdminError(USAGE.split('\n')[0] ?? USAGE);
  if (!command) throw new AdminError(`unknown command ${name}; \`npm run --silent admin -- --help\` lists the commands`);
  // The stage given, else the one the command implies (a token's), else the deployed table's, else live.
  const implied = command.implies?.(values);
  const given = option(values, 'stage');
  const stage = targetStage(given === undefined ? implied : parseStage(given));
  const result = await command.run(values, stage, action);
  return command.withoutStage ? result : { stage, ...result };
};

try {
  const result = await run();
  // The report as CSV is the one output that is not a JSON object.
  process.stdout.write(`${'csv' in result ? result.csv : JSON.stringify(result)}\n`);
} catch (error) {
  // One line: an AdminError says what was refused; anything else (AWS, arguments) its message.
  console.error(`admin failed: ${(error as Error).message.split('\n')[0]}`);
  process.exit(1);
}
