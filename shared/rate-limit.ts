export const RATE_LIMIT = { requestsPer5Minutes: 6000 } as const;
