/** Tests of the hand-written layer (node --test dist/): the SSE reader and the retries. */

import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";

import { ApiError, chooseMove, type HandView, RetryLaterError } from "./index.js";
import { parseRetryAfter, retryingFetch } from "./retry.js";
import { parseSse, sseEvents } from "./sse.js";

function streamOf(...chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

test("the SSE reader joins data lines, skips heartbeats and keeps ids across chunks", async () => {
  const events = [];
  const retries: number[] = [];
  const body = streamOf(": heartbeat\r", "\n", "id: 7\r\nevent: event\r\ndata: {\"a\":\r\n", "data: 1}\r\n\r\n", "retry: 500\n", "data: x\n\n");
  for await (const event of parseSse(body, (ms) => retries.push(ms))) events.push(event);
  assert.deepEqual(events, [
    { id: "7", event: "event", data: '{"a":\n1}' },
    { id: "7", event: "message", data: "x" },
  ]);
  assert.deepEqual(retries, [500]);
});

test("a dropped stream resumes with Last-Event-ID", async () => {
  const seen: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    const last = req.headers["last-event-id"] as string | undefined;
    seen.push(last);
    res.writeHead(200, { "Content-Type": "text/event-stream" });
    if (last === undefined) res.end("retry: 10\nid: 1\ndata: one\n\nid: 2\ndata: two\n\n");
    else res.end(`id: 3\ndata: after ${last}\n\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const got = [];
    for await (const event of sseEvents(`http://127.0.0.1:${port}/s`, { reconnects: 1 })) {
      got.push(event.data);
    }
    assert.deepEqual(got, ["one", "two", "after 2"]);
    assert.deepEqual(seen, [undefined, "2"]);
  } finally {
    server.close();
  }
});

test("429 and 503 are retried after Retry-After, with the same Idempotency-Key", async () => {
  const calls: Request[] = [];
  const answers = [503, 429, 201];
  const fetch = retryingFetch({ retries: 4, baseDelayMs: 1, maxDelayMs: 5 }, async (req) => {
    calls.push(req);
    return new Response("{}", { status: answers.shift()!, headers: { "Retry-After": "0" } });
  });
  const request = new Request("http://x/api/v1/hands/1/moves", {
    method: "POST",
    headers: { "Idempotency-Key": "k1" },
    body: '{"type":"draw"}',
  });
  assert.equal((await fetch(request)).status, 201);
  assert.equal(calls.length, 3);
  for (const call of calls) {
    assert.equal(call.headers.get("Idempotency-Key"), "k1");
    assert.equal(await call.text(), '{"type":"draw"}');
  }
});

test("a Retry-After beyond the wait cap is an error at once, saying how long and until when", async () => {
  let calls = 0;
  const fetch = retryingFetch({ retries: 4, baseDelayMs: 1, maxDelayMs: 5_000 }, async () => {
    calls++;
    return new Response('{"status":429,"code":"signup_limit","detail":"too many"}', {
      status: 429,
      headers: { "Retry-After": "85721", "Content-Type": "application/problem+json" },
    });
  });
  const before = Date.now();
  const error = await fetch(new Request("http://x/api/v1/auth/register", { method: "POST" })).then(
    () => assert.fail("a hopeless 429 was returned or retried"),
    (e: unknown) => e,
  );
  assert.equal(calls, 1); // not retried, and no wait
  assert.ok(error instanceof RetryLaterError && error instanceof ApiError);
  assert.equal(error.status, 429);
  assert.equal(error.code, "signup_limit");
  assert.equal(error.retryAfterSeconds, 85721);
  assert.ok(error.retryAt.getTime() >= before + 85721_000 && error.retryAt.getTime() <= Date.now() + 85721_000);
  assert.match(error.message, /retry after 85721 s, at \d{4}-\d\d-\d\dT/);
});

test("a Retry-After within the cap is waited out", async () => {
  const answers = [503, 200];
  const fetch = retryingFetch({ retries: 4, baseDelayMs: 1, maxDelayMs: 1_000 }, async () =>
    new Response("{}", { status: answers.shift()!, headers: { "Retry-After": "1" } }),
  );
  assert.equal((await fetch(new Request("http://x/t"))).status, 200);
});

test("a network error is retried only when the request is safe to repeat", async () => {
  let calls = 0;
  const failing = retryingFetch({ retries: 2, baseDelayMs: 1, maxDelayMs: 2 }, async () => {
    calls++;
    throw new TypeError("fetch failed");
  });
  await assert.rejects(failing(new Request("http://x/t", { method: "POST", body: "{}" })));
  assert.equal(calls, 1); // a POST without a key might have landed: not repeated
  calls = 0;
  await assert.rejects(failing(new Request("http://x/t")));
  assert.equal(calls, 3);
});

test("Retry-After is read as seconds or as a date", () => {
  assert.equal(parseRetryAfter("3"), 3000);
  assert.equal(parseRetryAfter("Wed, 01 Dec 2026 17:00:10 GMT", Date.parse("2026-12-01T17:00:00Z")), 10_000);
  assert.equal(parseRetryAfter(null), undefined);
});

test("the bot's move comes from the view's legal moves, without seat or system", () => {
  const view = {
    mode: "basic",
    legal_moves: [
      { type: "discard", card: "3V", seat: 1 },
      { type: "discard", card: "7N", seat: 1 },
    ],
    analysis: { quick_select: "7N" },
  } as unknown as HandView;
  assert.deepEqual(chooseMove(view), { type: "discard", card: "7N" });
  const none = { mode: "basic", legal_moves: [], analysis: null } as unknown as HandView;
  assert.equal(chooseMove(none), null);
});
