import { afterEach, describe, expect, it, vi } from 'vitest';
import { targetStage } from '../../bin/target';

/** Which stage an operator command acts on when SEED_TABLE_NAME names a deployed table. */
describe('the stage of an operator command', () => {
  afterEach(() => vi.unstubAllEnvs());

  it("takes the deployed table's stage when none is given, so its queues and token kinds are that table's", () => {
    vi.stubEnv('SEED_TABLE_NAME', 'affiliate-merchant-api-sandbox');

    expect(targetStage(undefined)).toBe('sandbox');
  });

  it("refuses a stage, given or implied by a token, that contradicts the deployed table's, naming the one to give", () => {
    vi.stubEnv('SEED_TABLE_NAME', 'affiliate-merchant-api-sandbox');

    expect(() => targetStage('live')).toThrow(
      "SEED_TABLE_NAME is the sandbox stage's table (affiliate-merchant-api-sandbox), but the command targets live: give --stage sandbox",
    );
  });

  it('takes the stage given, or live, for the local stack and for a table of another name', () => {
    vi.stubEnv('SEED_TABLE_NAME', '');
    const local = [targetStage(undefined), targetStage('sandbox')];
    vi.stubEnv('SEED_TABLE_NAME', 'my-copy-of-the-table');
    const renamed = [targetStage(undefined), targetStage('sandbox')];

    expect([local, renamed]).toEqual([
      ['live', 'sandbox'],
      ['live', 'sandbox'],
    ]);
  });
});
