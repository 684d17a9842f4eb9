/** Field-keyed messages; a failure of the request as a whole is keyed `message`. */
export type FieldErrors = Record<string, string[]>;

/** A domain error with its HTTP status, answered in the route's envelope (shared/http/envelope.ts). */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly errors: FieldErrors,
    /** Extra response headers (say, Retry-After), added by the envelope. */
    readonly headers: Record<string, string> = {},
  ) {
    super(Object.values(errors)[0]?.[0] ?? `HTTP ${statusCode}`);
    this.name = 'ApiError';
  }
}

/** A body must be smaller than this, to reach a function whole (docs/design-notes.md#limits); a digit and zeros, for the WebACL. */
export const MAX_BODY_BYTES = 2_000_000;

const messageError = (statusCode: number, message: string) => new ApiError(statusCode, { message: [message] });

export const MESSAGES = {
  unauthenticated: 'Unauthenticated.',
  notFound: 'Not Found',
  serverError: 'Server Error',
  invalidData: 'The given data was invalid.',
  wrongTokenKind: {
    live: 'A testing token cannot be used on the live API.',
    sandbox: 'A live token cannot be used on the sandbox API.',
  },
  noLiveOrders: 'This token is not allowed to place live orders.',
  /** A rate limit or the merchant's quota refused the request (429), as Laravel's throttle says it. */
  tooManyAttempts: 'Too Many Attempts.',
  /** A body of MAX_BODY_BYTES or more (413; the stage's WebACL answers it in AWS, the local server here). */
  bodyTooLarge: 'The request body must be smaller than 2 MB (2,000,000 bytes).',
  orderCreated: 'Order created successfully.',
} as const;

/** A path parameter that is not valid percent-encoding (400, naming it). */
export const badPercentEncoding = (parameter: string) => `The ${parameter} path parameter is not valid percent-encoding.`;

/** An invitation refused (422, keyed by the field). */
export const INVITE_MESSAGES = {
  emailTaken: 'The email has already been taken.',
  senderInvalid: 'The selected sender email is invalid.',
} as const;

/** Accepting or declining a request that is no longer pending: 422 with errors.message. */
export const REQUEST_MESSAGES = {
  alreadyAccepted: 'The affiliate request has already been accepted.',
  alreadyDeclined: 'The affiliate request has already been declined.',
} as const;

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** The header that marks an answer replayed from an Idempotency-Key's record. */
export const REPLAYED_HEADER = 'idempotent-replayed';

/** Idempotency-Key answers: a malformed header is 400, a key reused for another request 422, one still in flight 409. */
export const IDEMPOTENCY_MESSAGES = {
  required: 'The idempotency key field is required.',
  tooLong: `The idempotency key field must not be greater than ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`,
  reused: 'The idempotency key has already been used with a different request.',
  inFlight: 'A request with this idempotency key is still being processed.',
} as const;

export const unauthenticated = () => messageError(401, MESSAGES.unauthenticated);
export const forbidden = (message: string) => messageError(403, message);
export const notFound = () => messageError(404, MESSAGES.notFound);
/** The item a read found; none (missing, or another merchant's) is a 404. */
export const orNotFound = async <T>(read: Promise<T | undefined>): Promise<T> => {
  const item = await read;
  if (item === undefined) throw notFound();
  return item;
};
/** A business rule refused the operation (422 with `errors.message`). */
export const ruleRefused = (message: string) => messageError(422, message);
/** Too much contention to commit in time: the client should retry (503, Retry-After). */
export const busy = () => messageError(503, 'The service is busy. Please retry the request.');
export const keyReused = () => messageError(422, IDEMPOTENCY_MESSAGES.reused);
export const invalid = (errors: FieldErrors) => new ApiError(422, errors);
export const invalidField = (field: string, message: string) => invalid({ [field]: [message] });

/** The name of whatever was thrown ('' when it has none): AWS SDK errors are told apart by name. */
export const errorName = (error: unknown): string =>
  typeof error === 'object' && error !== null && 'name' in error && typeof error.name === 'string' ? error.name : '';

/** Whatever was thrown, as an Error: for log lines and messages. */
export const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

/** The HTTP status an AWS service answered with (undefined for an error raised before any answer). */
export const httpStatusOf = (error: unknown): number | undefined => {
  const metadata = typeof error === 'object' && error !== null && '$metadata' in error ? error.$metadata : undefined;
  return typeof metadata === 'object' && metadata !== null && 'httpStatusCode' in metadata && typeof metadata.httpStatusCode === 'number'
    ? metadata.httpStatusCode
    : undefined;
};

/** Whether an AWS SDK client raised this after a service call (it carries `$metadata`), not locally before one. */
export const cameFromService = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && '$metadata' in error && error.$metadata !== undefined;
