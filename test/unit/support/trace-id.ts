/** The form of meta.trace_id (no mocks here: integration tests import support/api.ts too). */
export const TRACE_ID = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z:api:[0-9a-f]{8}$/;
