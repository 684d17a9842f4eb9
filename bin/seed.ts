/** `npm run seed -- FILE [--stage live|sandbox]`: loads a fixture (USAGE says how and where). */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseFixture } from '#shared/admin/fixture';
import { seedFixture } from '#shared/admin/seed';
import { parseStage } from '#shared/config';
import { asError } from '#shared/errors';
import { resolveStore, targetStage } from './target';

const USAGE = `usage: npm run --silent seed -- FILE [--stage live|sandbox]

Loads a fixture (format: docs/architecture.md, "Fixtures"; a complete one: examples/fixture.json)
into the stage's table and prints one JSON object with the ids and tokens it created, and nothing
else, on stdout. A bad fixture is reported on stderr with the path of each problem (exit code 1),
and nothing of it is written. Each run creates new merchants (a fixed merchant \`id\` or token
\`value\` already in the table is refused).

Target: the running local stack (npm start; DYNAMODB_PORT overrides its recorded port), or a
deployed table when SEED_TABLE_NAME is set (AWS credentials and region from the environment).
--stage defaults to the stage of that table (affiliate-merchant-api-<stage>), else live; a stage
that contradicts the table is refused.`;

try {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { stage: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const file = positionals[0];
  if (!file) throw new Error(USAGE.split('\n')[0]);
  const stage = targetStage(values.stage === undefined ? undefined : parseStage(values.stage));
  const fixture = parseFixture(JSON.parse(readFileSync(file, 'utf8')));
  const result = await seedFixture(resolveStore(stage), stage, fixture);
  process.stdout.write(`${JSON.stringify(result)}\n`);
} catch (error) {
  console.error(`seed failed: ${asError(error).message}`);
  process.exit(1);
}
