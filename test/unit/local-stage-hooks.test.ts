import { resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { answerStack, installStageHooks, isStageAnswer, STAGE_HOOKS_ENV, stageHookPaths } from '#local/stage-hooks';
import { installs } from './support/stage-hook';

/**
 * What a caller of the local stack loads into each stage process (LOCAL_STAGE_HOOKS) and how the
 * stack asks a stage process for what a hook keeps.
 */

const ROOT = resolve(import.meta.dirname, '..', '..');
const HOOK = 'test/unit/support/stage-hook.ts';

describe('local stage hooks', () => {
  const original = process.send;
  afterEach(() => {
    process.send = original;
    installs.length = 0;
  });

  it('names no module when LOCAL_STAGE_HOOKS is unset or blank', () => {
    // Act
    const unset = stageHookPaths({});
    const blank = stageHookPaths({ [STAGE_HOOKS_ENV]: ' , ' });

    // Assess
    expect(unset).toEqual([]);
    expect(blank).toEqual([]);
  });

  it('reads a comma-separated list, a relative path from the repository root, an absolute one as it is', () => {
    // Act
    const paths = stageHookPaths({ [STAGE_HOOKS_ENV]: `${HOOK}, /elsewhere/hook.ts` });

    // Assess
    expect(paths).toEqual([resolve(ROOT, HOOK), '/elsewhere/hook.ts']);
  });

  it("loads each named module and calls its install with the stage's environment", async () => {
    // Prepare
    const env = { [STAGE_HOOKS_ENV]: HOOK, MARK: 'one' };

    // Act
    await installStageHooks(env);

    // Assess
    expect(installs).toEqual([env]);
  });

  it('refuses a module that exports no install', async () => {
    // Act
    const installing = installStageHooks({ [STAGE_HOOKS_ENV]: 'test/unit/support/trace-id.ts' });

    // Assess
    await expect(installing).rejects.toThrow(/exports no install\(env\)/);
  });

  it('answers the stack when it asks by name, and only then', () => {
    // Prepare
    const send = vi.fn(() => true);
    process.send = send;
    let asked = 0;
    const stop = answerStack('unit-tally', () => ({ asked: ++asked }));

    // Act
    process.emit('message', 'something-else', undefined);
    process.emit('message', 'unit-tally', undefined);
    stop();
    process.emit('message', 'unit-tally', undefined);

    // Assess
    expect(send).toHaveBeenCalledTimes(1);
    const [answer] = send.mock.calls[0] as unknown as [unknown];
    expect(isStageAnswer(answer, 'unit-tally')).toBe(true);
    expect(answer).toEqual({ answer: 'unit-tally', value: { asked: 1 } });
  });
});
