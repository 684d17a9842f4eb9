import type { TestProject } from 'vitest/node';
import { freePorts } from '#local/ports';
import { startLocalStack } from '#local/stack';
import { UNMETERED_QUOTA_ENV } from '#shared/quota/policy';
import { type ContractProxy, startContractProxy } from './contract-proxy';
import type { StackInfo } from './stack-info';

/**
 * Starts one local stack for the whole integration run: in memory, on free ports, without the demo.
 * A request may bring its own injected faults (the x-local-faults header, local/faults.ts), so a
 * test faults exactly the calls it means to and no other test sees them.
 * Credentials are not cached (AUTH_CACHE_TTL_SECONDS=0) so revocation is visible at once, and
 * follow-ups (owed e-mails, recounts) wait 2 s instead of 10. The commission consumer does not poll
 * (CONSUMER_POLL=off): the queue tests count the messages themselves, and the commission tests
 * run the consumer on their own. Webhook retries and timeouts are compressed to seconds.
 */
export default async function setup(project: TestProject) {
  const stack = await startLocalStack({
    ports: await freePorts(),
    faultsHeader: true,
    workerEnv: {
      // Merchants unmetered by default; the quota tests give theirs a quota of its own (npm run admin -- quota).
      ...UNMETERED_QUOTA_ENV,
      AUTH_CACHE_TTL_SECONDS: '0',
      FOLLOW_UP_MIN_DELAY_SECONDS: '2',
      // DynamoDB Local's index has no lag to wait out before a recount.
      RECOUNT_QUIET_SECONDS: '1',
      // Order numbers settle 15 s after their take instead of 60: still past a route's 10 s timeout, which a
      // create slowed by a test's faults on a busy machine may come near (the local stack does not end it then).
      ORDER_NUMBER_SETTLE_SECONDS: '15',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      CONSUMER_POLL: 'off',
      // Webhook retries after 0, 1, 1, ... s instead of hours, and a 1.5 s delivery timeout (tests only).
      WEBHOOK_RETRY_SCHEDULE_SECONDS: '0,1,1,1,1,1,1,1,1,1',
      WEBHOOK_DELIVERY_TIMEOUT_MS: '1500',
    },
  });
  const info: StackInfo = {
    endpoints: stack.endpoints,
    stages: {
      live: {
        url: stack.stages.live.url,
        table: stack.stages.live.table,
        streamArn: stack.stages.live.streamArn,
        queueUrls: stack.stages.live.queueUrls,
        ordersQueueUrl: stack.stages.live.ordersQueueUrl,
        dlqUrl: stack.stages.live.dlqUrl,
      },
      sandbox: {
        url: stack.stages.sandbox.url,
        table: stack.stages.sandbox.table,
        streamArn: stack.stages.sandbox.streamArn,
        queueUrls: stack.stages.sandbox.queueUrls,
        ordersQueueUrl: stack.stages.sandbox.ordersQueueUrl,
        dlqUrl: stack.stages.sandbox.dlqUrl,
      },
    },
  };
  const proxies: ContractProxy[] = [];
  const prism = process.env.CONTRACT_PROXY;
  if (prism) {
    for (const stage of ['live', 'sandbox'] as const) {
      const proxy = await startContractProxy(prism, info.stages[stage].url, stage);
      proxies.push(proxy);
      info.stages[stage].url = proxy.url;
    }
  }
  project.provide('stack', info);
  return async () => {
    const reports = await Promise.all(proxies.map((proxy) => proxy.stop()));
    await stack.stop();
    if (prism) {
      const responses = reports.reduce((sum, report) => sum + report.responses, 0);
      const violations = reports.flatMap((report) => report.violations);
      console.log(`contract proxy (prism): ${responses} responses, ${violations.length} response violations`);
      if (violations.length > 0) throw new Error(`response violations:\n${violations.join('\n')}`);
    }
  };
}
