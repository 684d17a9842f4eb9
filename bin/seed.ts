/**
 * `npm run seed -- FILE [--stage live|sandbox]`: loads a fixture (DESIGN.md format) and prints one
 * JSON object with the ids and tokens it created, and nothing else, on stdout.
 *
 * Target: the running local stack (DynamoDB Local of the running `npm start`, from its ports file;
 * DYNAMODB_PORT overrides it), or a deployed table when SEED_TABLE_NAME is set (then the normal AWS credential chain and region are used).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseFixture } from '#shared/admin/fixture';
import { seedFixture } from '#shared/admin/seed';
import { parseStage } from '#shared/config';
import { asError } from '#shared/errors';
import { resolveStore } from './target';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { stage: { type: 'string', default: 'live' } } });

try {
  const file = positionals[0];
  if (!file) throw new Error('usage: npm run seed -- FILE [--stage live|sandbox]');
  const stage = parseStage(values.stage);
  const fixture = parseFixture(JSON.parse(readFileSync(file, 'utf8')));
  const result = await seedFixture(resolveStore(stage), stage, fixture);
  process.stdout.write(`${JSON.stringify(result)}\n`);
} catch (error) {
  console.error(`seed failed: ${asError(error).message}`);
  process.exit(1);
}
