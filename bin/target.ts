import { useLocalAwsEnv } from '#local/aws-env';
import { runningDynamoDbEndpoint } from '#local/ports';
import { createStore, type Store } from '#shared/admin/store';
import { STAGES, type Stage } from '#shared/config';
import { tableNameForStage } from '#shared/db/table-def';

/**
 * The stage an operator command acts on: the one it was given (or its token implies), else the
 * stage whose table SEED_TABLE_NAME names (`affiliate-merchant-api-<stage>`), else live. A
 * stage that contradicts that table is refused: the queues, token kinds and quotas a command takes
 * from its stage would not be the table's.
 */
export const targetStage = (chosen: Stage | undefined): Stage => {
  const deployed = process.env.SEED_TABLE_NAME;
  const tableStage = STAGES.find((stage) => deployed === tableNameForStage(stage));
  if (chosen !== undefined && tableStage !== undefined && chosen !== tableStage)
    throw new Error(
      `SEED_TABLE_NAME is the ${tableStage} stage's table (${deployed}), but the command targets ${chosen}: give --stage ${tableStage}`,
    );
  return chosen ?? tableStage ?? 'live';
};

/**
 * Which table the operator commands (seed, admin) write to: a deployed one when SEED_TABLE_NAME is
 * set (AWS credentials and region from the environment), else the local stack's table of `stage`
 * (the running `npm start`'s DynamoDB, from its ports file; DYNAMODB_PORT overrides it).
 */
export const resolveStore = (stage: Stage): Store => {
  const deployed = process.env.SEED_TABLE_NAME;
  if (deployed) return createStore(deployed);
  useLocalAwsEnv();
  const endpoint = runningDynamoDbEndpoint();
  return createStore(tableNameForStage(stage), endpoint);
};

/**
 * Gives this process the environment a function of `stage` has (STAGE, TABLE_NAME and, locally,
 * the DynamoDB endpoint), so that function code (the notification relay) runs against the same
 * target as resolveStore. Call before importing that code: it reads its environment at import.
 */
export const useFunctionEnv = (stage: Stage) => {
  process.env.STAGE = stage;
  process.env.TABLE_NAME = process.env.SEED_TABLE_NAME || tableNameForStage(stage);
  process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
  if (process.env.SEED_TABLE_NAME) return;
  useLocalAwsEnv();
  process.env.AWS_ENDPOINT_URL_DYNAMODB ??= runningDynamoDbEndpoint();
};
