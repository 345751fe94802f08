/**
 * The Chắn server's TypeScript client: `paths` and `components` are generated from
 * /api/schema/ (openapi-typescript: `make ts-client`), requests go through openapi-fetch, and
 * this layer adds what every client needs: a bearer token, retries (429/503 with Retry-After,
 * network errors of safe requests; a Retry-After beyond the wait cap throws RetryLaterError), long polls with ETags, moves with an Idempotency-Key and
 * `expected_seq`, and the hand's events as a Server-Sent Events stream.
 */

import createClient, { type Client } from "openapi-fetch";

import { ApiError } from "./errors.js";
import { DEFAULT_RETRY, type RetryPolicy, retryingFetch } from "./retry.js";
import type { components, paths } from "./schema.js";
import { type SseEvent, sseEvents } from "./sse.js";

export type { components, paths } from "./schema.js";
export { ApiError, RetryLaterError } from "./errors.js";
export { DEFAULT_RETRY, parseRetryAfter, type RetryPolicy, retryingFetch } from "./retry.js";
export { parseSse, type SseEvent, sseEvents } from "./sse.js";

type Schemas = components["schemas"];
export type HandView = Schemas["HandView"];
export type Move = Schemas["Move"];
export type MoveInput = Schemas["MoveInput"];
export type HandEvent = Schemas["HandEvent"];
export type HandEffect = Schemas["HandEffect"];
export type Table = Schemas["TableOutput"];
export type Problem = Schemas["Problem"];

function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || result.data === undefined) {
    const body = result.error as { code?: string } | undefined;
    throw new ApiError(result.response.status, body?.code ?? "http_error", body);
  }
  return result.data;
}

/** A key unique to one move a client means to make: a retry sends the same one. */
export function idempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

export interface ChanClientOptions {
  baseUrl: string;
  token?: string;
  retry?: RetryPolicy;
  /** Seconds a long poll waits for a change (the server caps it). */
  wait?: number;
  fetch?: (input: Request) => Promise<Response>;
}

export class ChanClient {
  readonly api: Client<paths>;
  readonly baseUrl: string;
  token?: string;
  private readonly wait: number;

  constructor(options: ChanClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/$/, "");
    this.token = options.token;
    this.wait = options.wait ?? 25;
    this.api = createClient<paths>({
      baseUrl: this.baseUrl,
      fetch: retryingFetch(options.retry ?? DEFAULT_RETRY, options.fetch),
    });
    this.api.use({
      onRequest: ({ request }) => {
        if (this.token) request.headers.set("Authorization", `Bearer ${this.token}`);
        return request;
      },
    });
  }

  async register(username: string, password: string): Promise<string> {
    const body = unwrap(await this.api.POST("/api/v1/auth/register", { body: { username, password } }));
    this.token = body.token;
    return body.token;
  }

  async login(username: string, password: string): Promise<string> {
    const body = unwrap(await this.api.POST("/api/v1/auth/token", { body: { username, password } }));
    this.token = body.token;
    return body.token;
  }

  async createTable(body: Schemas["TableCreateInput"]): Promise<Table> {
    return unwrap(await this.api.POST("/api/v1/tables", { body }));
  }

  async join(tableId: number, body: Schemas["SeatJoinInput"] = {}): Promise<Table> {
    return unwrap(
      await this.api.POST("/api/v1/tables/{table_id}/join", {
        params: { path: { table_id: tableId } },
        body,
      }),
    );
  }

  /** The seed sent with the last ready at each table (the fair deal, docs/audit.md). */
  readonly clientSeeds = new Map<number, string>();

  /** Say ready (or not). Ready, it sends this seat's own seed for the fair deal: `clientSeed`,
   * or by default 32 random bytes in hex; `""` gives none. */
  async ready(
    tableId: number,
    ready = true,
    clientSeed?: string,
  ): Promise<Schemas["SeatReadyOutput"]> {
    const seed = ready ? (clientSeed ?? randomHex(32)) : undefined;
    const result = unwrap(
      await this.api.POST("/api/v1/tables/{table_id}/ready", {
        params: { path: { table_id: tableId } },
        body: seed === undefined ? { ready } : { ready, client_seed: seed },
      }),
    );
    if (seed !== undefined) this.clientSeeds.set(tableId, seed);
    return result;
  }

  async table(tableId: number): Promise<Table> {
    return unwrap(
      await this.api.GET("/api/v1/tables/{table_id}", { params: { path: { table_id: tableId } } }),
    );
  }

  async hand(handId: number): Promise<HandView> {
    return unwrap(
      await this.api.GET("/api/v1/hands/{hand_id}", { params: { path: { hand_id: handId } } }),
    );
  }

  /**
   * The view once the hand's seq is above `afterSeq`: a long poll (`?wait=&after_seq=`) with
   * `If-None-Match`; a 304 (nothing moved within `wait`) polls again, up to `rounds` times.
   */
  async nextView(handId: number, afterSeq: number, rounds = 40): Promise<HandView> {
    let etag: string | undefined;
    for (let round = 0; round < rounds; round++) {
      const result = await this.api.GET("/api/v1/hands/{hand_id}", {
        params: {
          path: { hand_id: handId },
          query: { after_seq: afterSeq, wait: this.wait },
          header: etag ? { "If-None-Match": etag } : {},
        },
      });
      if (result.response.status === 304) continue;
      const view = unwrap(result);
      etag = result.response.headers.get("ETag") ?? undefined;
      if (view.seq > afterSeq || view.status === "ended") return view;
    }
    throw new Error(`hand ${handId}: nothing moved after seq ${afterSeq}`);
  }

  /**
   * Make a move. `expectedSeq` refuses it (409 stale_seq) if the hand moved meanwhile; the
   * Idempotency-Key makes a retry after a lost answer safe (the first answer comes back).
   */
  async move(
    handId: number,
    move: MoveInput,
    options: { expectedSeq?: number; key?: string } = {},
  ): Promise<Schemas["MoveCreated"]> {
    const body: MoveInput =
      options.expectedSeq === undefined ? move : { ...move, expected_seq: options.expectedSeq };
    return unwrap(
      await this.api.POST("/api/v1/hands/{hand_id}/moves", {
        params: {
          path: { hand_id: handId },
          header: { "Idempotency-Key": options.key ?? idempotencyKey() },
        },
        body,
      }),
    );
  }

  async events(handId: number, afterSeq?: number): Promise<Schemas["HandEventPage"]> {
    return unwrap(
      await this.api.GET("/api/v1/hands/{hand_id}/events", {
        params: { path: { hand_id: handId }, query: { after_seq: afterSeq } },
      }),
    );
  }

  /**
   * The hand's events as they happen (`Accept: text/event-stream`; `Last-Event-ID` resumes),
   * each `data` parsed as a HandEvent. Needs a server with the streams; on one without them
   * the first request fails (not an event stream).
   */
  async *eventStream(handId: number, lastEventId?: string): AsyncGenerator<HandEvent> {
    const headers: Record<string, string> = this.token ? { Authorization: `Bearer ${this.token}` } : {};
    const url = `${this.baseUrl}/api/v1/hands/${handId}/events`;
    for await (const event of sseEvents(url, { headers, lastEventId }) as AsyncGenerator<SseEvent>) {
      // an event of the hand is a JSON object with its seq; anything else is the server's own
      let data: unknown;
      try {
        data = JSON.parse(event.data);
      } catch {
        continue;
      }
      if (data && typeof data === "object" && "seq" in data) yield data as HandEvent;
    }
  }
}

/** The move a simple bot makes from its own view (null: it has none): win, declare (let the
 * server declare), chíu, eat, discard the card the basic-mode analysis suggests, draw, pass. */
export function chooseMove(view: HandView): MoveInput | null {
  const legal = view.legal_moves;
  if (!legal.length) return null;
  const moves = view.mode === "advanced" ? legal.filter((m) => m.type !== "u") : legal;
  const pool = moves.length ? moves : legal;
  const of = <T extends Move["type"]>(type: T) =>
    pool.filter((m): m is Extract<Move, { type: T }> => m.type === type);
  const declare = of("declare");
  if (of("u").length) return { type: "u" };
  if (declare.length) return { type: "declare", auto: true };
  const chiu = of("chiu")[0];
  if (chiu) return { type: "chiu", card: chiu.card };
  const eat = of("eat")[0];
  if (eat) return { type: "eat", card: eat.card, with: eat.with };
  const discards = of("discard");
  if (discards.length) {
    const suggested = view.analysis?.quick_select;
    const pick = discards.find((m) => m.card === suggested) ?? discards[0]!;
    return { type: "discard", card: pick.card };
  }
  const tra = of("tra_cua")[0];
  if (tra) return { type: "tra_cua", card: tra.card };
  if (of("draw").length) return { type: "draw" };
  if (of("pass").length) return { type: "pass" };
  const first = pool[0]!;
  const { seat: _seat, system: _system, ...rest } = first as Move & { system?: boolean };
  return rest as MoveInput;
}

function randomHex(bytes: number): string {
  const raw = globalThis.crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(raw, (b) => b.toString(16).padStart(2, "0")).join("");
}
