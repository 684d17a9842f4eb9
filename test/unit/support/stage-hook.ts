/** A stage hook for the tests of local/stage-hooks.ts: remembers each install and the env it got. */
export const installs: NodeJS.ProcessEnv[] = [];

export const install = (env: NodeJS.ProcessEnv) => {
  installs.push(env);
};
