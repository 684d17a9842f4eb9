import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The modules a caller loads into each stage process, and how the stack asks them (docs/architecture.md#local-shape-npm-start). */

export const STAGE_HOOKS_ENV = 'LOCAL_STAGE_HOOKS';

/** A module named in LOCAL_STAGE_HOOKS. */
type StageHook = { install: (env: NodeJS.ProcessEnv) => unknown };

/** What a stage process sends back when the stack asks it something. */
type StageAnswer = { answer: string; value: unknown };

export const isStageAnswer = (message: unknown, request: string): message is StageAnswer =>
  typeof message === 'object' && message !== null && (message as Partial<StageAnswer>).answer === request;

const ROOT = resolve(import.meta.dirname, '..');

/** The modules LOCAL_STAGE_HOOKS names, as absolute paths. */
export const stageHookPaths = (env: NodeJS.ProcessEnv = process.env) =>
  (env[STAGE_HOOKS_ENV] ?? '')
    .split(',')
    .map((path) => path.trim())
    .filter((path) => path !== '')
    .map((path) => (isAbsolute(path) ? path : resolve(ROOT, path)));

/** Loads each module LOCAL_STAGE_HOOKS names and calls its `install(env)`, in order; call before the handlers load. */
export const installStageHooks = async (env: NodeJS.ProcessEnv = process.env) => {
  for (const path of stageHookPaths(env)) {
    const hook = (await import(pathToFileURL(path).href)) as Partial<StageHook>;
    if (typeof hook.install !== 'function') throw new Error(`${path} exports no install(env)`);
    await hook.install(env);
  }
};

/** In a stage process: answers the stack's `ask(request)` with what `reply` gives at that moment; returns what stops answering. */
export const answerStack = (request: string, reply: () => unknown) => {
  const listener = (message: unknown) => {
    if (message === request) process.send?.({ answer: request, value: reply() } satisfies StageAnswer);
  };
  process.on('message', listener);
  return () => {
    process.off('message', listener);
  };
};
