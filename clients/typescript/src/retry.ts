/**
 * A fetch that retries what is safe to retry: 429 and 503 after `Retry-After` (or a backoff), and
 * a network error for a GET or a request that carries an `Idempotency-Key` (the server replays
 * the first response of a key instead of moving twice). A 429 or 503 whose `Retry-After` is
 * longer than `maxDelayMs` is not waited for: it throws `RetryLaterError` at once, saying when.
 */

import { RetryLaterError } from "./errors.js";

export interface RetryPolicy {
  /** Attempts after the first one. */
  retries: number;
  /** Backoff of the first retry in ms, doubled each time (with jitter), at most `maxDelayMs`. */
  baseDelayMs: number;
  /** The longest wait; a `Retry-After` beyond it throws `RetryLaterError` instead. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 4, baseDelayMs: 250, maxDelayMs: 30_000 };

const RETRY_STATUSES = new Set([429, 503]);

/** Seconds (an integer) or an HTTP date, as ms from now; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export function backoff(policy: RetryPolicy, attempt: number, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxDelayMs);
  const exp = policy.baseDelayMs * 2 ** attempt;
  return Math.min(policy.maxDelayMs, exp / 2 + Math.random() * (exp / 2));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function retryingFetch(
  policy: RetryPolicy = DEFAULT_RETRY,
  inner: (input: Request) => Promise<Response> = (input) => globalThis.fetch(input),
): (input: Request) => Promise<Response> {
  return async (input: Request) => {
    const replayable = input.method === "GET" || input.headers.has("Idempotency-Key");
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= policy.retries;
      let response: Response;
      try {
        response = await inner(last ? input : input.clone());
      } catch (error) {
        if (last || !replayable) throw error;
        await sleep(backoff(policy, attempt));
        continue;
      }
      if (!RETRY_STATUSES.has(response.status)) return response;
      const wait = parseRetryAfter(response.headers.get("Retry-After"));
      if (wait !== undefined && wait > policy.maxDelayMs) {
        const body = (await response.json().catch(() => undefined)) as { code?: string } | undefined;
        throw new RetryLaterError(response.status, body?.code ?? "http_error", body, wait / 1000);
      }
      if (last) return response;
      await response.body?.cancel();
      await sleep(backoff(policy, attempt, wait));
    }
  };
}
