/**
 * `npm start`: the whole API locally, no AWS account needed.
 *   npm start                  data kept in .local/dynamodb-v2 across restarts
 *   npm start -- --in-memory   a fresh, throw-away run
 */
import { resolve } from 'node:path';
import { DEMO } from '#local/demo';
import { MissingJavaError } from '#local/emulators';
import { portsFromEnv, removePortsFile, writePortsFile } from '#local/ports';
import { LOCAL_DATA_DIR, startLocalStack } from '#local/stack';
import { asError } from '#shared/errors';

const inMemory = process.argv.includes('--in-memory');
const dataDir = inMemory ? undefined : resolve(import.meta.dirname, '..', '.local', LOCAL_DATA_DIR);

try {
  let fatal: ((message: string) => void) | undefined;
  const stack = await startLocalStack({
    ports: portsFromEnv(),
    dataDir,
    seedDemo: true,
    onRestart: (message) => console.error(message),
    onFatal: (message) => fatal?.(message),
  });
  // For `npm run invoke` and other tools on this machine: where this stack listens (.local/ports.json).
  writePortsFile(stack.ports);
  process.on('exit', () => removePortsFile());
  const seededNow = Object.keys(stack.demo).length > 0;
  console.log(`
Affiliate Program Merchant API — local stack (${inMemory ? 'in memory' : `data in ${dataDir}`})
  live API      ${stack.stages.live.url}
  sandbox API   ${stack.stages.sandbox.url}
  SES inbox     ${stack.endpoints.ses}
  DynamoDB      ${stack.endpoints.dynamodb}   SQS ${stack.endpoints.sqs}

Demo merchant ${DEMO.merchantId} (${seededNow ? 'seeded now' : 'already seeded'}):
  live token                    ${DEMO.tokens.live}
  live token, no live orders    ${DEMO.tokens.liveNoOrders}
  sandbox (testing) token       ${DEMO.tokens.sandbox}

Try: curl -s ${stack.stages.live.url}/api/v2/orders -H 'Authorization: Bearer ${DEMO.tokens.live}' -H 'Accept: application/json'
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
  if (error instanceof MissingJavaError) {
    console.error(error.message);
  } else {
    console.error(`Could not start the local stack: ${asError(error).message}`);
  }
  process.exit(1);
}
