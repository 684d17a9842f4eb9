import { useLocalAwsEnv } from '#local/aws-env';
import { runningDynamoDbEndpoint } from '#local/ports';
import { createStore, type Store } from '#shared/admin/store';
import { STAGES, type Stage } from '#shared/config';
import { tableNameForStage } from '#shared/db/table-def';

/** The stage an operator command acts on: the one given (or implied), else SEED_TABLE_NAME's, else live; one contradicting the table is refused. */
export const targetStage = (chosen: Stage | undefined): Stage => {
  const deployed = process.env.SEED_TABLE_NAME;
  const tableStage = STAGES.find((stage) => deployed === tableNameForStage(stage));
  if (chosen !== undefined && tableStage !== undefined && chosen !== tableStage)
    throw new Error(
      `SEED_TABLE_NAME is the ${tableStage} stage's table (${deployed}), but the command targets ${chosen}: give --stage ${tableStage}`,
    );
  return chosen ?? tableStage ?? 'live';
};

/** The table the operator commands write to: SEED_TABLE_NAME's when set, else the running `npm start`'s of `stage`. */
export const resolveStore = (stage: Stage): Store => {
  const deployed = process.env.SEED_TABLE_NAME;
  if (deployed) return createStore(deployed);
  useLocalAwsEnv();
  return createStore(tableNameForStage(stage), runningDynamoDbEndpoint());
};

/** Gives this process the environment a function of `stage` has, before importing function code (it reads it at import). */
export const useFunctionEnv = (stage: Stage) => {
  process.env.STAGE = stage;
  process.env.TABLE_NAME = process.env.SEED_TABLE_NAME || tableNameForStage(stage);
  process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
  if (process.env.SEED_TABLE_NAME) return;
  useLocalAwsEnv();
  process.env.AWS_ENDPOINT_URL_DYNAMODB ??= runningDynamoDbEndpoint();
};
