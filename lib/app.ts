import { type App, Aspects } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { STAGES, type Stage } from '#shared/config';
import { readStageConfig } from './config';
import { MerchantApiStage } from './merchant-api-stage';

/** Both stages, one stack each, under cdk-nag; environment-agnostic unless context pins them (lib/README.md#deploy). */
export const buildApp = (app: App): Record<Stage, MerchantApiStage> => {
  const account = app.node.tryGetContext('account') as string | undefined;
  const region = app.node.tryGetContext('region') as string | undefined;
  const stacks = {} as Record<Stage, MerchantApiStage>;
  for (const stage of STAGES) {
    stacks[stage] = new MerchantApiStage(app, `affiliate-merchant-api-${stage}`, {
      stage,
      config: readStageConfig(app.node, stage),
      env: account || region ? { account, region } : undefined,
    });
  }
  Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
  return stacks;
};
