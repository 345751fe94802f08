/**
 * A bot that plays one hand to its end from each player's own view: two players register, sit
 * at a two-seat table and ready up; each then long-polls its view and sends the move its view
 * offers (`chooseMove`) with `expected_seq` and an Idempotency-Key, until the hand has ended.
 *
 *   node dist/bot.js --base http://127.0.0.1:8000 [--prefix tsbot]
 *
 * The players are `<prefix>_<random>_a` and `_b`: new ones each run, so a second run works.
 *
 * Prints one JSON line: {"hand_id", "status", "outcome", "moves", "raced"}.
 */

import { ApiError, ChanClient, chooseMove, type HandView, RetryLaterError } from "./index.js";

// Refusals that mean "the hand moved on under me": read the view again and decide again.
const RACED = new Set(["stale_seq", "not_your_turn", "wrong_phase", "hand_over"]);
const PASSWORD = "a-long-enough-Passw0rd!";

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

async function play(client: ChanClient, handId: number, stats: { moves: number; raced: number }): Promise<HandView> {
  let view = await client.hand(handId);
  while (view.status !== "ended") {
    const move = chooseMove(view);
    if (move === null) {
      view = await client.nextView(handId, view.seq);
      continue;
    }
    try {
      view = (await client.move(handId, move, { expectedSeq: view.seq })).state;
      stats.moves++;
    } catch (error) {
      if (!(error instanceof ApiError) || !RACED.has(error.code)) throw error;
      stats.raced++;
      view = await client.hand(handId);
    }
  }
  return view;
}

async function main(): Promise<void> {
  const baseUrl = arg("base", "http://127.0.0.1:8000");
  const prefix = `${arg("prefix", "tsbot")}_${globalThis.crypto.randomUUID().slice(0, 8)}`;
  const [a, b] = [new ChanClient({ baseUrl }), new ChanClient({ baseUrl })];
  await a.register(`${prefix}_a`, PASSWORD);
  await b.register(`${prefix}_b`, PASSWORD);
  const table = await a.createTable({ name: "typescript", stake: 10, max_seats: 2 });
  await b.join(table.id);
  await a.ready(table.id);
  const handId = (await b.ready(table.id)).hand_id;
  if (handId === null) throw new Error("no hand was dealt");
  const stats = { moves: 0, raced: 0 };
  const [viewA] = await Promise.all([play(a, handId, stats), play(b, handId, stats)]);
  console.log(
    JSON.stringify({ hand_id: handId, status: viewA.status, outcome: viewA.outcome, ...stats }),
  );
}

main().catch((error: unknown) => {
  if (error instanceof RetryLaterError) {
    console.error(
      `bot: the server refused (${error.status} ${error.code}) and asks for a wait of ` +
        `${Math.round(error.retryAfterSeconds)} s: try again after ${error.retryAt.toISOString()}`,
    );
  } else {
    console.error(error);
  }
  process.exit(1);
});
