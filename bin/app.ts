/**
 * The CDK app: `npx cdk synth --all`, `npm run deploy:live`, `npm run deploy:sandbox`.
 * Settings come from context (lib/config.ts, lib/README.md).
 */
import { App } from 'aws-cdk-lib';
import { buildApp } from '../lib/app';

const app = new App();
buildApp(app);
app.synth();
