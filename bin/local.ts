/** `npm start`: the whole API locally, no AWS account needed (`npm start -- --help`). */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEMO } from '#local/demo';
import { MissingJavaError } from '#local/emulators';
import { FaultSpecError } from '#local/faults';
import { forgetRunningStack, portsFromEnv, recordRunningStack, stackKeepingData } from '#local/ports';
import { LOCAL_DATA_DIR, startLocalStack } from '#local/stack';
import { asError } from '#shared/errors';

const USAGE = `Usage: npm start [-- OPTIONS]

Starts DynamoDB Local, the SQS and SES emulators and both stages of the API on this machine.

Options:
  --in-memory                 a fresh, throw-away run (default: data kept in .local/${LOCAL_DATA_DIR})
  --faults SPEC               inject faults into the functions' AWS calls, e.g.
                              "dynamodb:throttle=5%,dynamodb.write:lost=2%,sqs:refuse=5%" (docs/correctness.md)
  --faults-seed N             repeat the same fault draws
  --dynamodb-endpoint URL     use a DynamoDB that already runs (creating the stages' tables if missing)
                              instead of starting DynamoDB Local
  -h, --help                  this text

Ports: PORT (live, 3000), SANDBOX_PORT (3001), SES_PORT (8005), DYNAMODB_PORT (8000), SQS_PORT (4566).`;

const usageError = (message: string): never => {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
};

const { values: args } = (() => {
  try {
    return parseArgs({
      options: {
        'in-memory': { type: 'boolean', default: false },
        faults: { type: 'string' },
        'faults-seed': { type: 'string' },
        'dynamodb-endpoint': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    return usageError(asError(error).message);
  }
})();
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}
const faultsSeed = args['faults-seed'] === undefined ? undefined : Number(args['faults-seed']);
if (faultsSeed !== undefined && !Number.isInteger(faultsSeed))
  usageError(`--faults-seed must be a whole number, got ${args['faults-seed']}`);
const dynamodbEndpoint = args['dynamodb-endpoint'];
if (dynamodbEndpoint !== undefined && !URL.canParse(dynamodbEndpoint))
  usageError(`--dynamodb-endpoint must be a URL, got ${dynamodbEndpoint}`);

const inMemory = args['in-memory'];
const dataDir = inMemory || dynamodbEndpoint ? undefined : resolve(import.meta.dirname, '..', '.local', LOCAL_DATA_DIR);
const keeper = dataDir === undefined ? undefined : stackKeepingData(dataDir);
if (keeper) {
  console.error(
    `Another npm start (pid ${keeper.pid}, live API on port ${keeper.ports.live}) keeps its data in ${dataDir}: stop it, or start this one with --in-memory.`,
  );
  process.exit(1);
}
// Where this stack listens and keeps its data, for the tools (.local/ports.json); recorded first, so a second start meanwhile sees it.
const record = { ...(dynamodbEndpoint ? { dynamodbEndpoint } : {}), ...(dataDir ? { dataDir } : {}) };
recordRunningStack({ ports: portsFromEnv(), ...record });
process.on('exit', () => forgetRunningStack());

try {
  let fatal: ((message: string) => void) | undefined;
  const stack = await startLocalStack({
    ports: portsFromEnv(),
    dataDir,
    seedDemo: true,
    faults: args.faults,
    faultsSeed,
    dynamodbEndpoint,
    onFatal: (message) => fatal?.(message),
  });
  recordRunningStack({ ports: stack.ports, ...record });
  const seededNow = Object.keys(stack.demo).length > 0;
  console.log(`
Affiliate Program Merchant API — local stack (${dynamodbEndpoint ? `DynamoDB at ${dynamodbEndpoint}` : inMemory ? 'in memory' : `data in ${dataDir}`})
  live API      ${stack.stages.live.url}
  sandbox API   ${stack.stages.sandbox.url}
  SES inbox     ${stack.endpoints.ses}
  webhook inbox ${stack.stages.live.url}/webhook-inbox   (webhooks may target http://127.0.0.1 and localhost here, https only when deployed)
  DynamoDB      ${stack.endpoints.dynamodb}   SQS ${stack.endpoints.sqs}

Demo merchant ${DEMO.merchantId} (${seededNow ? 'seeded now' : 'already seeded'}):
  live token                    ${DEMO.tokens.live}
  live token, no live orders    ${DEMO.tokens.liveNoOrders}
  sandbox (testing) token       ${DEMO.tokens.sandbox}

${args.faults ? `Faults injected into the functions' AWS calls: ${args.faults}${faultsSeed === undefined ? '' : ` (seed ${faultsSeed})`}\n` : ''}Try: curl -s ${stack.stages.live.url}/api/v2/orders -H 'Authorization: Bearer ${DEMO.tokens.live}' -H 'Accept: application/json'
Ctrl-C stops everything.
`);
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    console.log('\nStopping the local stack…');
    await stack.stop();
    process.exit(0);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  // An emulator died: one line, stop everything else, exit non-zero (rather than answer 500s forever).
  fatal = (message) => {
    if (stopping) return;
    stopping = true;
    console.error(message);
    void stack.stop().finally(() => process.exit(1));
  };
} catch (error) {
  const known = error instanceof MissingJavaError || error instanceof FaultSpecError;
  console.error(known ? error.message : `Could not start the local stack: ${asError(error).message}`);
  process.exit(1);
}
