/** A variable a function needs, read at import so a missing one fails on init, not mid-request. */
export const requireEnv = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`Missing required environment variable ${name}`);
  return value;
};

export type Stage = 'live' | 'sandbox';

export const STAGES: readonly Stage[] = ['live', 'sandbox'];

export const parseStage = (value: string | undefined): Stage => {
  if (value === 'live' || value === 'sandbox') return value;
  throw new Error(`STAGE must be "live" or "sandbox", got ${JSON.stringify(value)}`);
};

export const currentStage = (): Stage => parseStage(requireEnv('STAGE'));
