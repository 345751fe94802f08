/**
 * /play/: sign up or in, the lobby's minimum (my Quan, a practice table with three server bots),
 * and the table: my cards grouped, each seat's door and mat, the card on offer, the stock, whose
 * turn and its clock, the legal moves the server offers as buttons and keys, the declaration
 * picker, the result and the next hand. Everything goes through the project's TypeScript client
 * (clients/typescript) and the public API alone; the hand is followed on its event stream (SSE),
 * long polls where the server ends streams at once (WSGI) or refuses them, and the seat's view is
 * read again on each event.
 */

import {
  ApiError,
  ChanClient,
  type HandView,
  type Move,
  type MoveInput,
  sseEvents,
  type Table,
} from "../../typescript/src/index.js";
import { cardName, cardSvg, compareCards, groupHand, type Groups } from "./cards.js";
import { h } from "./dom.js";
import { CATALOGUES, type Catalogue, type Lang } from "./i18n.js";

const TOKEN_KEY = "chan.play.token";
const LANG_KEY = "chan.play.lang";
const TABLE_KEY = "chan.play.table";

let lang: Lang = localStorage.getItem(LANG_KEY) === "en" ? "en" : "vi";
let t: Catalogue = CATALOGUES[lang];
const client = new ChanClient({
  baseUrl: location.origin,
  token: localStorage.getItem(TOKEN_KEY) ?? undefined,
});

const root = document.getElementById("app") as HTMLElement;
let stop = new AbortController();
let rerender: () => void = () => {};

// --------------------------------------------------------------------------- frame

function frame(title: string, ...body: (Node | null)[]): void {
  document.title = `${title} · ${t.title}`;
  document.documentElement.lang = lang;
  const nav = h(
    "nav",
    { "aria-label": "menu" },
    h("a", { href: "#/" }, t.lobby),
    h(
      "button",
      {
        type: "button",
        id: "lang",
        lang: lang === "vi" ? "en" : "vi",
        onclick: () => {
          lang = lang === "vi" ? "en" : "vi";
          t = CATALOGUES[lang];
          localStorage.setItem(LANG_KEY, lang);
          rerender();
        },
      },
      t.lang_switch,
    ),
    client.token
      ? h("button", { type: "button", id: "signout", onclick: signOut }, t.signout)
      : null,
  );
  root.replaceChildren(
    h("header", {}, h("p", { class: "brand" }, "Chắn"), nav),
    h("main", { id: "main" }, h("h1", {}, title), ...body),
    h("p", { id: "error", role: "alert" }),
  );
}

function showError(error: unknown): void {
  const box = document.getElementById("error");
  const detail =
    error instanceof ApiError
      ? ((error.body as { detail?: string } | undefined)?.detail ?? error.message)
      : String(error);
  if (box) box.textContent = `${t.error}: ${detail}`;
}

function clearError(): void {
  const box = document.getElementById("error");
  if (box) box.textContent = "";
}

async function signOut(): Promise<void> {
  try {
    await client.api.POST("/api/v1/auth/logout", {});
  } catch {
    // the token is forgotten here either way
  }
  client.token = undefined;
  localStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(TABLE_KEY);
  location.hash = "#/";
  route();
}

// --------------------------------------------------------------------------- sign up / in

function authPage(mode: "signup" | "signin"): void {
  rerender = () => authPage(mode);
  const username = h("input", { id: "username", name: "username", autocomplete: "username", required: true, maxlength: 150 });
  const password = h("input", {
    id: "password",
    name: "password",
    type: "password",
    autocomplete: mode === "signup" ? "new-password" : "current-password",
    required: true,
  });
  const form = h(
    "form",
    { id: "auth", class: "card-panel" },
    h("label", { for: "username" }, t.username),
    username,
    h("label", { for: "password" }, t.password),
    password,
    h("button", { type: "submit", id: "auth-submit" }, mode === "signup" ? t.signup : t.signin),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearError();
    try {
      const token =
        mode === "signup"
          ? await client.register(username.value, password.value)
          : await client.login(username.value, password.value);
      localStorage.setItem(TOKEN_KEY, token);
      route();
    } catch (error) {
      showError(error);
    }
  });
  const other = h(
    "button",
    { type: "button", class: "link", id: "auth-other", onclick: () => authPage(mode === "signup" ? "signin" : "signup") },
    mode === "signup" ? t.have_account : t.no_account,
  );
  frame(mode === "signup" ? t.signup : t.signin, form, other);
  username.focus();
}

// --------------------------------------------------------------------------- the lobby

async function lobbyPage(): Promise<void> {
  rerender = () => void lobbyPage();
  frame(t.lobby, h("p", {}, t.loading));
  let me;
  try {
    const result = await client.api.GET("/api/v1/me", {});
    if (result.response.status === 401) return forgetToken();
    me = result.data;
  } catch (error) {
    return showError(error);
  }
  if (!me) return;
  const fmt = (n: number) => n.toLocaleString(lang === "vi" ? "vi-VN" : "en-US");
  const wallet = h(
    "dl",
    { id: "wallet", class: "wallet" },
    h("dt", {}, t.balance),
    h("dd", { id: "balance" }, `${fmt(me.balance)} ${t.quan}`),
    h("dt", {}, t.held),
    h("dd", {}, `${fmt(me.held)} ${t.quan}`),
    h("dt", {}, t.available),
    h("dd", {}, `${fmt(me.available)} ${t.quan}`),
  );
  const delay = h(
    "select",
    { id: "bot-delay", name: "bot_delay" },
    ...[1, 0, 2, 3].map((s) => h("option", { value: s }, `${s} ${t.seconds}`)),
  );
  const practice = h(
    "section",
    { class: "card-panel", "aria-labelledby": "practice-title" },
    h("h2", { id: "practice-title" }, t.practice),
    h("p", {}, t.practice_help),
    h("label", { for: "bot-delay" }, t.bot_delay),
    delay,
    h(
      "button",
      {
        type: "button",
        id: "practice",
        onclick: async () => {
          clearError();
          try {
            const table = await client.createTable({
              name: t.practice,
              practice: true,
              bots: 3,
              bot_delay: Number(delay.value),
            });
            await client.ready(table.id);
            localStorage.setItem(TABLE_KEY, String(table.id));
            location.hash = `#/table/${table.id}`;
          } catch (error) {
            showError(error);
          }
        },
      },
      t.practice,
    ),
  );
  const mine = localStorage.getItem(TABLE_KEY);
  const [rooms, open] = await Promise.all([
    client.api.GET("/api/v1/rooms", {}).then((r) => r.data ?? []),
    client.api.GET("/api/v1/tables", { params: { query: { limit: 20 } } }).then((r) => r.data ?? []),
  ]).catch((error: unknown) => {
    showError(error);
    return [[], []] as const;
  });
  const roomSelect = h(
    "select",
    { id: "room", name: "room" },
    ...rooms.map((r) =>
      h(
        "option",
        { value: r.slug },
        `${r.name[lang] ?? r.slug}${r.requirements.balance ? ` (≥ ${fmt(r.requirements.balance)} ${t.quan})` : ""}`,
      ),
    ),
  );
  const stake = h("input", { id: "stake", name: "stake", type: "number", min: 1, value: 1, inputmode: "numeric" });
  const seatsSelect = h("select", { id: "max-seats", name: "max_seats" }, ...[4, 3, 2].map((n) => h("option", { value: n }, n)));
  const sitDown = async (make: () => Promise<Table>) => {
    clearError();
    try {
      const table = await make();
      await client.ready(table.id);
      localStorage.setItem(TABLE_KEY, String(table.id));
      location.hash = `#/table/${table.id}`;
    } catch (error) {
      showError(error);
    }
  };
  const createForm = h(
    "form",
    { id: "create-table", class: "card-panel", "aria-labelledby": "create-title" },
    h("h2", { id: "create-title" }, t.new_table),
    h("label", { for: "room" }, t.room),
    roomSelect,
    h("label", { for: "stake" }, t.stake),
    stake,
    h("label", { for: "max-seats" }, t.max_seats),
    seatsSelect,
    h("p", {}, h("button", { type: "submit", id: "create" }, t.new_table)),
  );
  createForm.addEventListener("submit", (event) => {
    event.preventDefault();
    void sitDown(() =>
      client.createTable({
        name: `${t.table} ${me.username}`,
        room: roomSelect.value,
        stake: Number(stake.value),
        max_seats: Number(seatsSelect.value),
      }),
    );
  });
  const openTables = h(
    "section",
    { class: "card-panel", id: "open-tables", "aria-labelledby": "open-title" },
    h("h2", { id: "open-title" }, t.open_tables),
    open.length
      ? h(
          "ul",
          { class: "table-list" },
          ...open.map((table) =>
            h(
              "li",
              { "data-table": table.id },
              h("span", {}, `${table.name} · ${table.room} · ${t.stake} ${table.stake} · ${table.seats.map((s) => s.username).join(", ")} (${table.seats.length}/${table.max_seats})`),
              table.seats.some((s) => s.username === me.username)
                ? h("a", { href: `#/table/${table.id}` }, t.my_table)
                : h(
                    "span",
                    { class: "actions" },
                    table.open_seats > 0
                      ? h(
                          "button",
                          { type: "button", class: "join", "data-table": table.id, onclick: () => void sitDown(() => client.join(table.id)) },
                          t.join,
                        )
                      : null,
                    table.spectators && table.current_hand_id !== null
                      ? h("a", { href: `#/table/${table.id}`, class: "watch" }, t.watch)
                      : null,
                  ),
            ),
          ),
        )
      : h("p", {}, t.no_open_tables),
  );
  frame(
    `${t.lobby} — ${me.display_name || me.username}`,
    wallet,
    mine ? h("p", {}, h("a", { href: `#/table/${mine}`, id: "my-table" }, t.my_table)) : null,
    practice,
    openTables,
    createForm,
  );
}

function forgetToken(): void {
  client.token = undefined;
  localStorage.removeItem(TOKEN_KEY);
  authPage("signup");
}

// --------------------------------------------------------------------------- the table

interface TableState {
  table: Table;
  view: HandView | null;
  transport: "sse" | "poll";
  cuoc: string[];
  busy: boolean;
  /** I said ready for the next hand: the page waits for the deal. */
  readySent: boolean;
  /** My user id (my seat at the table). */
  me: number | null;
  /** Ends the wait for the deal at once (after my ready). */
  wake?: () => void;
}

/** A stream shorter than this that brought nothing is one the server ends at once. */
const STREAM_AT_ONCE_MS = 3000;
const MULTI_CUOC = new Set(["tom", "leo", "thien_khai", "chiu", "an_bon"]);

async function tablePage(tableId: number): Promise<void> {
  const signal = stop.signal;
  frame(`${t.table} ${tableId}`, h("p", {}, t.loading));
  let table: Table;
  try {
    table = await client.table(tableId);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return forgetToken();
    return showError(error);
  }
  const state: TableState = { table, view: null, transport: "sse", cuoc: [], busy: false, readySent: false, me: null };
  rerender = () => drawTable(state);
  const [cuoc, me] = await Promise.all([enabledCuoc(table), client.api.GET("/api/v1/me", {})]);
  state.cuoc = cuoc;
  state.me = me.data?.id ?? null;
  noteReady(state);
  drawTable(state);
  let handId = table.current_hand_id;
  while (!signal.aborted) {
    if (handId !== null) {
      state.readySent = false;
      await followHand(state, handId, signal);
    }
    if (signal.aborted) return;
    handId = await nextDeal(state, signal);
  }
}

/** Whether the server has me ready at the table (then the page waits for the deal). */
function noteReady(state: TableState): void {
  const seat = state.table.seats.find((s) => s.user_id === state.me);
  if (seat?.ready) state.readySent = true;
}

/** The next hand's id once it is dealt: the table read again every few seconds (at once after
 * my ready), its seats' readiness drawn meanwhile. */
async function nextDeal(state: TableState, signal: AbortSignal): Promise<number | null> {
  const done = state.view?.hand_id ?? null;
  while (!signal.aborted) {
    await new Promise<void>((resolve) => {
      state.wake = resolve;
      void sleep(2000, signal).then(resolve);
    });
    if (signal.aborted) return null;
    try {
      state.table = await client.table(state.table.id);
    } catch (error) {
      showError(error);
      continue;
    }
    noteReady(state);
    const current = state.table.current_hand_id;
    if (current !== null && current !== done) {
      state.view = null;
      return current;
    }
    if (!state.view) drawTable(state);
  }
  return null;
}

/** The cước the table's preset has enabled, in declaration order (for the picker). */
async function enabledCuoc(table: Table): Promise<string[]> {
  try {
    const result = await client.api.GET("/api/v1/rules/presets", {});
    const preset = result.data?.find((p) => p.preset === table.ruleset.preset);
    if (!preset) return [];
    return Object.entries(preset.cuoc)
      .filter(([slug, value]) => value.enabled && table.ruleset.overrides[`cuoc.${slug}.enabled`] !== false)
      .map(([slug]) => slug);
  } catch {
    return [];
  }
}

/** Follow a hand to its end (and its Quan booked): the event stream, each event a reason to read
 * the seat's view again; a long poll when the stream ends or is refused. */
async function followHand(state: TableState, handId: number, signal: AbortSignal): Promise<void> {
  const show = (view: HandView) => {
    if (signal.aborted) return;
    const old = state.view;
    if (old && old.hand_id === view.hand_id && view.seq < old.seq) return;
    if (old && old.hand_id === view.hand_id && view.seq === old.seq && old.settlement?.quan && !view.settlement?.quan) return;
    state.view = view;
    drawTable(state);
  };
  let view = await client.hand(handId);
  show(view);
  let quanWaits = 0;
  let shortStreams = 0; // streams in a row that the server ended at once
  while (!signal.aborted) {
    view = state.view ?? view;
    if (view.status !== "playing") {
      if (view.settlement && !view.settlement.quan && quanWaits++ < 20) {
        await sleep(500, signal);
        show(await client.hand(handId));
        continue;
      }
      return;
    }
    if (state.transport === "sse") {
      try {
        const headers: Record<string, string> = client.token ? { Authorization: `Bearer ${client.token}` } : {};
        const url = `${client.baseUrl}/api/v1/hands/${handId}/events?after_seq=${view.seq}`;
        let heard = 0;
        const opened = Date.now();
        for await (const event of sseEvents(url, { headers, reconnects: 0, signal })) {
          if (!event.data.includes('"seq"')) continue;
          heard++;
          const fresh = await client.hand(handId);
          show(fresh);
          if (fresh.status !== "playing") break;
        }
        // a stream that lasted (the server ends them after some minutes) opens again, as does
        // one that ended with its hand; one that ends at once with nothing new, or twice in a
        // row at once after what there was, is a server that sends what there is and closes
        // (WSGI): long polls serve better from now on
        if (signal.aborted || state.view?.status !== "playing") continue;
        if (Date.now() - opened > STREAM_AT_ONCE_MS) {
          shortStreams = 0;
          continue;
        }
        if (heard > 0 && ++shortStreams < 2) continue;
        state.transport = "poll";
        drawTable(state);
      } catch (error) {
        if (signal.aborted) return;
        state.transport = "poll"; // refused or not a stream: long polls from now on
        drawTable(state);
      }
    }
    // no stream, or it ended with nothing new: one long poll
    try {
      show(await client.nextView(handId, view.seq, 1));
    } catch (error) {
      if (signal.aborted) return;
      if (!(error instanceof Error && error.message.includes("nothing moved"))) throw error;
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function seatName(view: HandView, seat: number | null | undefined): string {
  if (seat === null || seat === undefined) return "—";
  const player = view.players[seat];
  const name = player?.username ?? `${t.seat} ${seat + 1}`;
  const bot = name.startsWith("bot~") ? ` (${t.bot})` : "";
  const me = view.my_seat === seat ? ` (${t.you})` : "";
  return `${name}${bot}${me}`;
}

function cardList(cards: readonly string[], cls = "cards"): HTMLElement {
  return h("ul", { class: cls }, ...cards.map((c) => h("li", {}, cardSvg(c, t))));
}

function moveLabel(move: Move): string {
  switch (move.type) {
    case "eat":
      return `${t.move.eat} ${cardName(move.card, t)} ${t.with} ${cardName(move.with, t)}`;
    case "chiu":
    case "tra_cua":
    case "discard":
      return `${t.move[move.type]} ${cardName(move.card, t)}`;
    default:
      return t.move[move.type];
  }
}

function moveInput(move: Move): MoveInput {
  const { seat: _seat, ...rest } = move as Move & { system?: boolean };
  delete (rest as { system?: boolean }).system;
  return rest as MoveInput;
}

async function play(state: TableState, move: MoveInput): Promise<void> {
  const view = state.view;
  if (!view || state.busy) return;
  state.busy = true;
  clearError();
  try {
    await client.move(view.hand_id, move, { expectedSeq: view.seq });
    const fresh = await client.hand(view.hand_id);
    if (!state.view || fresh.seq >= state.view.seq) state.view = fresh;
  } catch (error) {
    if (!(error instanceof ApiError && error.code === "stale_seq")) showError(error);
  } finally {
    state.busy = false;
    drawTable(state);
  }
}

let clockTimer: number | undefined;

function drawTable(state: TableState): void {
  const { table, view } = state;
  if (clockTimer !== undefined) window.clearInterval(clockTimer);
  const heading = view ? `${t.table} ${table.id} · ${t.hand_no} ${view.number}` : `${t.table} ${table.id}`;
  // my limits' reality check, read with the table between hands (docs/api.md, limits)
  const check = table.reality_check;
  const reminder = check?.due
    ? h("p", { id: "reality-check", class: "reminder", role: "note" }, t.reality_check(check.minutes_played, check.net))
    : null;
  if (!view) {
    frame(heading, reminder, nextHandPanel(state, t.waiting_deal));
    return;
  }
  const mine = view.my_seat;
  const legal = view.status === "playing" ? view.legal_moves : [];
  const discards = new Set(legal.filter((m) => m.type === "discard").map((m) => (m as { card: string }).card));
  const status = h("p", { id: "status", role: "status", "aria-live": "polite" });
  const clock = h("span", { id: "clock" });
  if (view.status === "playing") {
    status.append(
      view.turn_seat === mine ? t.my_turn : `${t.waiting} ${seatName(view, view.turn_seat)}`,
      " · ",
      clock,
    );
    const tick = () => {
      const left = view.deadline ? Math.max(0, Math.round((Date.parse(view.deadline) - Date.now()) / 1000)) : null;
      clock.textContent = left === null ? "" : `${left} ${t.seconds}`;
    };
    tick();
    clockTimer = window.setInterval(tick, 1000);
  }
  const info = h(
    "dl",
    { class: "info" },
    h("dt", {}, t.stock),
    h("dd", { id: "stock" }, view.stock_count),
    h("dt", {}, t.turn),
    h("dd", { id: "turn" }, view.status === "playing" ? seatName(view, view.turn_seat) : "—"),
    h("dt", {}, "↔"),
    h("dd", { id: "transport" }, state.transport === "sse" ? t.connection_sse : t.connection_poll),
  );
  const offer = view.offer
    ? h(
        "section",
        { id: "offer", class: "offer", "aria-label": t.offer },
        h("h2", {}, t.offer),
        cardSvg(view.offer.card, t),
        h(
          "p",
          {},
          `${seatName(view, view.offer.by)} — ${view.offer.source === "stock" ? t.from_stock : t.from_discard}`,
          view.status === "playing" ? ` · ${t.offered_to} ${seatName(view, view.turn_seat)}` : "",
        ),
      )
    : null;
  const seats = h(
    "ol",
    { id: "seats", class: "seats" },
    ...Array.from({ length: view.n_seats }, (_, seat) => {
      const pub = view.seats[seat];
      const mat = view.mats[seat] ?? [];
      const door = view.doors[seat] ?? [];
      return h(
        "li",
        {
          class: `seat${seat === view.turn_seat && view.status === "playing" ? " turn" : ""}${seat === mine ? " mine" : ""}`,
          "data-seat": seat,
        },
        h(
          "h2",
          {},
          seatName(view, seat),
          seat === view.dealer ? h("span", { class: "badge" }, t.dealer) : null,
          pub?.bao ? h("span", { class: "badge warn" }, t.bao) : null,
        ),
        h("p", { class: "count" }, `${pub?.hand_count ?? 0} ${t.cards_left}`),
        h("h3", {}, t.door),
        cardList(door, "cards small door"),
        h("h3", {}, t.mat),
        h("ul", { class: "cards small mat" }, ...mat.map((g) => h("li", { class: `group ${g.kind}` }, ...g.cards.map((c) => cardSvg(c, t))))),
        pub?.hand?.length && seat !== mine
          ? [h("h3", {}, t.groups.hand), cardList(pub.hand, "cards small revealed")]
          : null,
        pub?.faults.length ? h("p", { class: "faults" }, `${t.faults}: ${pub.faults.map((f) => t.fault_names[f.slug] ?? f.slug).join(", ")}`) : null,
      );
    }),
  );
  const groups: Groups = view.analysis
    ? {
        chan: view.analysis.chan ?? [],
        ca: view.analysis.ca ?? [],
        ba_dau: view.analysis.ba_dau ?? [],
        que: view.analysis.que ?? [],
      }
    : groupHand(view.hand);
  const cardButton = (code: string) =>
    discards.has(code)
      ? h(
          "button",
          {
            type: "button",
            class: "card-button",
            "data-move": "discard",
            "data-card": code,
            "data-suggested": view.analysis?.quick_select === code,
            onclick: () => void play(state, { type: "discard", card: code } as MoveInput),
          },
          cardSvg(code, t),
        )
      : cardSvg(code, t);
  const groupRow = (key: keyof Catalogue["groups"], sets: string[][]) =>
    sets.length
      ? h(
          "div",
          { class: `group-row ${key}` },
          h("h3", {}, t.groups[key]),
          h("ul", { class: "cards" }, ...sets.map((set) => h("li", { class: "set" }, ...set.map(cardButton)))),
        )
      : null;
  const hand =
    mine === null || view.spectator
      ? null
      : h(
          "section",
          { id: "hand", "aria-labelledby": "hand-title" },
          h("h2", { id: "hand-title" }, t.my_hand),
          view.my_faults?.length
            ? h("p", { class: "faults", id: "my-faults" }, `${t.my_faults}: ${(view.my_faults ?? []).map((f) => t.fault_names[f.slug] ?? f.slug).join(", ")}`)
            : null,
          groupRow("chan", groups.chan),
          groupRow("ba_dau", groups.ba_dau),
          groupRow("ca", groups.ca),
          groupRow("que", [...groups.que].sort(compareCards).map((c) => [c])),
        );
  const moves = legal.filter((m) => m.type !== "discard" && m.type !== "declare" && m.type !== "set_prefs");
  const movePanel =
    view.status === "playing" && mine !== null
      ? h(
          "section",
          { id: "moves", "aria-labelledby": "moves-title" },
          h("h2", { id: "moves-title" }, t.moves),
          moves.length || discards.size
            ? h(
                "div",
                { class: "move-buttons" },
                ...moves.map((m) =>
                  h(
                    "button",
                    {
                      type: "button",
                      "data-move": m.type,
                      class: m.type === "u" ? "primary" : null,
                      onclick: () => void play(state, moveInput(m)),
                    },
                    moveLabel(m),
                  ),
                ),
              )
            : h("p", {}, legal.some((m) => m.type === "declare") ? "" : t.no_moves),
          discards.size ? h("p", { id: "discard-hint" }, t.discard_hint) : null,
          legal.some((m) => m.type === "declare") ? declarePicker(state) : null,
          h("p", { class: "help" }, t.keys_help),
        )
      : null;
  const result = view.status !== "playing" ? resultPanel(state, view) : null;
  frame(heading, h("div", { class: "board" }, h("div", { class: "play" }, status, reminder, info, offer, result, movePanel, hand), seats));
}

function declarePicker(state: TableState): HTMLElement {
  const inputs = state.cuoc.map((slug) =>
    MULTI_CUOC.has(slug)
      ? h("input", { type: "number", min: 0, max: 4, value: 0, id: `cuoc-${slug}`, name: slug, inputmode: "numeric" })
      : h("input", { type: "checkbox", id: `cuoc-${slug}`, name: slug }),
  );
  const form = h(
    "form",
    { id: "declare", class: "card-panel" },
    h(
      "fieldset",
      {},
      h("legend", {}, t.declare_title),
      h("p", {}, t.declare_help),
      h(
        "ul",
        { class: "cuoc-list" },
        ...state.cuoc.map((slug, i) => h("li", {}, inputs[i]!, h("label", { for: `cuoc-${slug}` }, t.cuoc[slug] ?? slug))),
      ),
    ),
    h("button", { type: "submit", id: "declare-send", class: "primary" }, t.declare_send),
    h(
      "button",
      { type: "button", id: "declare-auto", onclick: () => void play(state, { type: "declare", auto: true }) },
      t.declare_auto,
    ),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const cuoc: Record<string, number> = {};
    for (const input of inputs) {
      const n = input.type === "checkbox" ? Number(input.checked) : Number(input.value);
      if (n > 0) cuoc[input.name] = n;
    }
    void play(state, { type: "declare", cuoc });
  });
  return form;
}

function cuocText(cuoc: Record<string, number> | undefined): string {
  const parts = Object.entries(cuoc ?? {}).map(([slug, n]) => `${t.cuoc[slug] ?? slug}${n > 1 ? ` ×${n}` : ""}`);
  return parts.join(", ") || "—";
}

function resultPanel(state: TableState, view: HandView): HTMLElement {
  const outcome = view.outcome;
  const rows: (HTMLElement | null)[] = [];
  const row = (label: string, value: string | Node, id?: string) =>
    rows.push(h("tr", {}, h("th", { scope: "row" }, label), h("td", id ? { id } : {}, value)));
  if (outcome) {
    row(t.result, t.results[outcome.result], "outcome");
    if (outcome.seat !== undefined) row(t.winner, seatName(view, outcome.seat));
  }
  if (view.win?.card) row(t.win_card, cardSvg(view.win.card, t));
  const d = view.declaration;
  if (d) {
    row(t.declared, cuocText(d.cuoc), "declared");
    row(t.true_cuoc, cuocText(d.true_cuoc), "true-cuoc");
    row(t.verdict, t.verdicts[d.verdict], "verdict");
    const score = (s: { base: number; ga: number; total: number }) => `${s.base} + ${s.ga} = ${s.total}`;
    row(`${t.declared} — ${t.score}`, score(d.declared_score));
    row(`${t.true_cuoc} — ${t.score}`, score(d.true_score));
  }
  const settlement = view.settlement;
  const transfers = settlement?.transfers.length
    ? h(
        "ul",
        { id: "transfers" },
        ...settlement.transfers.map((tr) =>
          h(
            "li",
            {},
            `${seatName(view, tr.from)} → ${tr.to === "pot" ? "pot" : seatName(view, tr.to)}: ${tr.points} ${t.points.toLowerCase()} (${tr.reason})`,
          ),
        ),
      )
    : null;
  const quan = settlement?.quan;
  const quanPart = !settlement
    ? null
    : !quan
      ? h("p", {}, t.quan_pending)
      : quan.practice
        ? h("p", { id: "quan" }, t.practice_quan)
        : h(
            "ul",
            { id: "quan" },
            ...quan.seats.map((s) => h("li", {}, `${seatName(view, s.seat)}: ${s.net > 0 ? "+" : ""}${s.net} ${t.quan}`)),
          );
  return h(
    "section",
    { id: "result", class: "card-panel", "aria-labelledby": "result-title" },
    h("h2", { id: "result-title" }, t.result),
    h("table", {}, h("tbody", {}, ...rows)),
    transfers ? h("h3", {}, t.transfers) : null,
    transfers,
    h("h3", {}, t.quan_net),
    quanPart,
    nextHandPanel(state, null),
  );
}

function nextHandPanel(state: TableState, note: string | null): HTMLElement | null {
  const seated = state.table.seats.some((s) => s.user_id === state.me);
  if (!seated) return state.view ? null : h("p", { id: "spectating" }, t.spectating);
  const seats = state.view
    ? null
    : h(
        "ul",
        { id: "waiting-seats" },
        ...state.table.seats.map((s) =>
          h("li", {}, `${t.seat} ${s.number + 1}: ${s.username}${s.bot ? ` (${t.bot})` : ""} — ${s.ready ? t.ready_yes : t.ready_no}`),
        ),
      );
  return h(
    "div",
    { class: "next" },
    note ? h("p", {}, note) : null,
    seats,
    state.readySent
      ? h("p", { id: "waiting-deal" }, t.waiting_deal)
      : h(
          "button",
          {
            type: "button",
            id: "next-hand",
            class: "primary",
            onclick: async () => {
              clearError();
              try {
                const ready = await client.ready(state.table.id);
                state.table = ready.table;
                state.readySent = true;
                drawTable(state);
                state.wake?.();
              } catch (error) {
                showError(error);
              }
            },
          },
          state.view ? t.next_hand : t.ready,
        ),
  );
}

// --------------------------------------------------------------------------- keys

const KEYS: Record<string, Move["type"]> = { b: "draw", d: "pass", u: "u", c: "chiu", a: "eat" };

document.addEventListener("keydown", (event) => {
  const target = event.target as HTMLElement | null;
  if (target && (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA")) return;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const key = event.key.toLowerCase();
  let button: HTMLButtonElement | null = null;
  if (key === "q") {
    button = document.querySelector<HTMLButtonElement>(".card-button[data-suggested]") ?? document.querySelector<HTMLButtonElement>(".card-button");
  } else if (KEYS[key]) {
    button = document.querySelector<HTMLButtonElement>(`#moves button[data-move="${KEYS[key]}"]`);
  }
  if (button) {
    event.preventDefault();
    button.click();
  }
});

// --------------------------------------------------------------------------- routes

function route(): void {
  stop.abort();
  stop = new AbortController();
  clearError();
  if (!client.token) return authPage("signup");
  const match = /^#\/table\/(\d{1,18})$/.exec(location.hash);
  if (match) {
    const tableId = Number(match[1]);
    rerender = () => frame(`${t.table} ${tableId}`);
    void tablePage(tableId).catch(showError);
    return;
  }
  void lobbyPage();
}

window.addEventListener("hashchange", route);
route();
