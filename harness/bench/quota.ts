/** The per-merchant quota beside a noisy neighbour and its cost, then across containers (docs/contributing.md#how-each-part-measures). */
import { pathToFileURL } from 'node:url';
import { recordingEnv, takeWriteRecord } from '#harness/recorders/write-recorder';
import type { LocalStack } from '#local/stack';
import { QUOTA_PARTITION_SUFFIX } from '#shared/db/entities/quota';
import { atRate, benchMerchant, onBenchStack, type Print, printTable, type Reply, seedMerchants, send } from './local';
import { p50p99 } from './percentile';
import { benchQuotaContainers } from './quota-containers';

const QUOTA_BENCH = { rate: 20, floodFactor: 10, seconds: 60, baselineSeconds: 20 } as const;

/** `rate` GETs per second for `seconds` with one token; each answer's status and latency. */
const drive = async (url: string, token: string, rate: number, seconds: number) => {
  const answers: Reply[] = [];
  await atRate(rate, rate * seconds, () => send(`${url}/api/v2/tiers`, token).then((reply) => answers.push(reply)));
  return answers;
};

const summary = (answers: Reply[]) => {
  const ok = answers.filter((answer) => answer.status === 200).map((answer) => answer.ms);
  return {
    ...p50p99(ok),
    refused: answers.filter((answer) => answer.status === 429).length,
    sent: answers.length,
  };
};

/** A fresh stack with the two merchants seeded and B warmed up, for `measure`; stopped after it. */
const onStack = <T>(enforced: boolean, measure: (stack: LocalStack, tokens: { noisy: string; quiet: string }) => Promise<T>) => {
  const { rate } = QUOTA_BENCH;
  const env = { CONSUMER_POLL: 'off', STREAM_POLL: 'off', QUOTA_RATE_PER_SECOND: String(rate), QUOTA_BURST: String(2 * rate) };
  return onBenchStack({ ...env, ...recordingEnv(), ...(enforced ? {} : { QUOTA_ENFORCEMENT: 'off' }) }, async (stack) => {
    const seeded = await seedMerchants(stack, [benchMerchant('noisy', 'Quota noisy'), benchMerchant('quiet', 'Quota quiet')]);
    const tokens = { noisy: seeded('noisy').token, quiet: seeded('quiet').token };
    await drive(stack.stages.live.url, tokens.quiet, rate / 2, 5);
    return measure(stack, tokens);
  });
};

export const benchQuota = async (print: Print = console.log) => {
  const { rate, floodFactor, seconds, baselineSeconds } = QUOTA_BENCH;
  const quietRate = rate / 2;
  print(
    `\n## Quotas: a noisy neighbour (quota ${rate}/s, burst ${2 * rate}; ${new Date().toISOString()})\n\nMerchant B reads at half its quota (${quietRate}/s); merchant A sends ${floodFactor}x its quota (${rate * floodFactor}/s) for ${seconds} s. Baseline: B alone with the quota switched off.\n`,
  );
  const baseline = await onStack(false, async (stack, tokens) =>
    summary(await drive(stack.stages.live.url, tokens.quiet, quietRate, baselineSeconds)),
  );
  const result = await onStack(true, async (stack, tokens) => {
    const url = stack.stages.live.url;
    await takeWriteRecord(stack);
    const quietAlone = summary(await drive(url, tokens.quiet, quietRate, baselineSeconds));
    const writes = (await takeWriteRecord(stack)).live.records;
    const quotaWrites = writes.filter((call) => (call.writes ?? []).some((write) => write.key.endsWith(QUOTA_PARTITION_SUFFIX))).length;
    const [quietBesideAnswers, floodAnswers] = await Promise.all([
      drive(url, tokens.quiet, quietRate, seconds),
      drive(url, tokens.noisy, rate * floodFactor, seconds),
    ]);
    const quietBeside = summary(quietBesideAnswers);
    const admitted = floodAnswers.filter((answer) => answer.status === 200).length;
    const flood = { sent: floodAnswers.length, admitted, allowed: rate * seconds + 2 * rate };
    const writesPerRequest = quotaWrites / Math.max(1, quietAlone.sent);
    const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(1)} ms` : 'n/a');
    const row = (label: string, run: typeof quietAlone) => [label, run.sent, run.refused, ms(run.p50), ms(run.p99)];
    printTable(print, 'merchant B (half its quota) | requests | 429 | p50 | p99', [
      ['quota off (baseline)', Math.round(quietRate * baselineSeconds), '-', ms(baseline.p50), ms(baseline.p99)],
      row('quota on, alone', quietAlone),
      row("quota on, beside A's flood", quietBeside),
    ]);
    print(
      `\nMerchant A sent ${flood.sent} requests; ${admitted} were admitted, against ${flood.allowed} its bucket allows in ${seconds} s (rate x seconds + burst): ${(((admitted - flood.allowed) / flood.allowed) * 100).toFixed(1)}% off. The quota's writes: ${writesPerRequest.toFixed(2)} per request of B (one process serves all of B's requests here, so it takes several tokens per write; a refusal writes nothing); its cost in latency: p50 ${ms(quietAlone.p50 - baseline.p50)}, p99 ${ms(quietAlone.p99 - baseline.p99)} over the baseline.`,
    );
    return { quietAlone, quietBeside, baseline, flood, writesPerRequest };
  });
  return { ...result, containers: await benchQuotaContainers(print) };
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await benchQuota();
