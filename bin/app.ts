/**
 * The CDK app: `npm run synth -- -c alarmEmail=...`, `npm run deploy:live`, `npm run deploy:sandbox`.
 * Settings come from context (lib/config.ts, lib/README.md); the live stage needs an alarm
 * destination (-c alarmEmail or -c alarmTopicArn) on every command, else one line and exit 1.
 */
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
