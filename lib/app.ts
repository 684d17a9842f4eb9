import { Aspects, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { STAGES, type Stage } from '../shared/config';
import { readStageConfig } from './config';
import { MerchantApiStage } from './merchant-api-stage';

export const stackNameForStage = (stage: Stage) => `affiliate-merchant-api-${stage}`;

/**
 * Both stages, one stack each, with cdk-nag's AwsSolutions checks on the whole app. The account and
 * region come from context (`-c account=... -c region=...`) or the CLI's credentials; without them
 * the stacks are environment-agnostic, so `cdk synth` needs no AWS account.
 */
export const buildApp = (app: App): Record<Stage, MerchantApiStage> => {
  const account = (app.node.tryGetContext('account') as string | undefined) ?? process.env.CDK_DEFAULT_ACCOUNT;
  const region = (app.node.tryGetContext('region') as string | undefined) ?? process.env.CDK_DEFAULT_REGION;
  const stacks = {} as Record<Stage, MerchantApiStage>;
  for (const stage of STAGES) {
    stacks[stage] = new MerchantApiStage(app, stackNameForStage(stage), {
      stage,
      config: readStageConfig(app.node, stage),
      env: account || region ? { account, region } : undefined,
    });
  }
  Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
  return stacks;
};
