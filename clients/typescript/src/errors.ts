/** The errors the client throws for an answer it was not given. */

/** A refusal of the server (problem+json): its status, stable `code` and translated detail. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly body: unknown,
  ) {
    super(`${status} ${code}: ${(body as { detail?: string } | undefined)?.detail ?? ""}`);
  }
}

/**
 * A 429 or 503 whose `Retry-After` is longer than the client waits (`RetryPolicy.maxDelayMs`):
 * thrown at once, not retried. `retryAfterSeconds` is the server's figure, `retryAt` the time it
 * names.
 */
export class RetryLaterError extends ApiError {
  readonly retryAt: Date;

  constructor(
    status: number,
    code: string,
    body: unknown,
    readonly retryAfterSeconds: number,
  ) {
    super(status, code, body);
    this.retryAt = new Date(Date.now() + retryAfterSeconds * 1000);
    this.message += ` (retry after ${retryAfterSeconds} s, at ${this.retryAt.toISOString()})`;
  }
}
