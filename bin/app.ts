/**
 * The CDK app: `npx cdk synth --all`, `npm run deploy:live`, `npm run deploy:sandbox`.
 * Settings come from context (lib/config.ts, lib/README.md).
 */
import { App } from 'aws-cdk-lib';
import { buildApp } from '../lib/app';
import { ContextError } from '../lib/config';

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
