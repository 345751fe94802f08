/**
 * A reader of Server-Sent Events (the WHATWG event-stream format) over fetch: `id:`, `event:`,
 * `data:` (several lines joined by "\n"), `retry:`, comments (heartbeats) skipped. `sseEvents`
 * reconnects after a dropped stream with `Last-Event-ID`, so a reader resumes where it was.
 */

export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/** Parse one stream's body into events, in order. */
export async function* parseSse(
  body: ReadableStream<Uint8Array>,
  onRetry?: (ms: number) => void,
): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  let event = "";
  let id: string | undefined;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      // a "\r" at the end may be the first half of a "\r\n": keep it for the next chunk
      const cut = buffer.endsWith("\r") ? buffer.length - 1 : buffer.length;
      const lines = buffer.slice(0, cut).split(/\r\n|\r|\n/);
      buffer = (lines.pop() ?? "") + buffer.slice(cut);
      for (const line of lines) {
        if (line === "") {
          if (data.length) yield { id, event: event || "message", data: data.join("\n") };
          data = [];
          event = "";
          continue;
        }
        if (line.startsWith(":")) continue; // a comment: the server's heartbeat
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let val = colon < 0 ? "" : line.slice(colon + 1);
        if (val.startsWith(" ")) val = val.slice(1);
        if (field === "data") data.push(val);
        else if (field === "event") event = val;
        else if (field === "id" && !val.includes("\0")) id = val;
        else if (field === "retry" && /^\d+$/.test(val)) onRetry?.(Number(val));
      }
    }
  } finally {
    reader.releaseLock();
  }
}

export interface SseOptions {
  headers?: Record<string, string>;
  lastEventId?: string;
  /** Reconnections after the stream drops (the server's `retry:` sets the delay). */
  reconnects?: number;
  signal?: AbortSignal;
  fetch?: typeof globalThis.fetch;
}

/** Events of `url` as they come; resumes after a drop from the last event's id. */
export async function* sseEvents(url: string, options: SseOptions = {}): AsyncGenerator<SseEvent> {
  const doFetch = options.fetch ?? globalThis.fetch;
  let lastEventId = options.lastEventId;
  let delay = 1000;
  for (let attempt = 0; attempt <= (options.reconnects ?? 5); attempt++) {
    const headers: Record<string, string> = { Accept: "text/event-stream", ...options.headers };
    if (lastEventId !== undefined) headers["Last-Event-ID"] = lastEventId;
    const response = await doFetch(url, { headers, signal: options.signal });
    if (!response.ok || !response.body) {
      throw new Error(`stream ${url}: HTTP ${response.status}`);
    }
    if (!(response.headers.get("Content-Type") ?? "").startsWith("text/event-stream")) {
      throw new Error(`stream ${url}: not an event stream`);
    }
    for await (const event of parseSse(response.body, (ms) => (delay = ms))) {
      if (event.id !== undefined) lastEventId = event.id;
      yield event;
    }
    if (options.signal?.aborted) return;
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
