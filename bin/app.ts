/** The CDK app (`npm run synth -- -c alarmEmail=...`); settings come from context (lib/README.md#deploy). */
import { App } from 'aws-cdk-lib';
import { buildApp } from '#lib/app';
import { ContextError } from '#lib/config';

const app = new App();
try {
  buildApp(app);
} catch (error) {
  if (!(error instanceof ContextError)) throw error;
  // A setting the operator must fix: one line, no stack trace.
  console.error(error.message);
  process.exit(1);
}
app.synth();
