/* The replay viewer of a hand (admin, auditors only). The page holds every step as JSON
   (games.selectors.replay.hand_replay_steps) and every label as JSON (games.replay_labels, from
   the locale catalogue); this script draws one step at a time: first / previous / next / last,
   the slider, the fault markers, the arrow keys (Home and End too) and ?seq=N deep links. At a
   step: the move and its zoned time, the mover's legal moves (the chosen one marked), the
   faults made there (hidden ones too); at the end: the verdict, the winning card, the declared
   and the true cước with their points (and the readings as right as the true cước), the Quan
   and the ledger entries. The cards are small SVG drawings. Plain JavaScript, no libraries;
   text only through textContent. */
(function () {
  "use strict";

  var RED = { CC: 1, "8V": 1, "8S": 1, "9V": 1, "9S": 1 };
  var SUIT = { V: "Vạn", N: "Văn", S: "Sách" };
  var SVG = "http://www.w3.org/2000/svg";

  var root = document.getElementById("replay");
  var data = JSON.parse(document.getElementById("replay-data").textContent);
  // Every label comes from the locale catalogue (games/replay_labels.py), in the page's language.
  var L = JSON.parse(document.getElementById("replay-labels").textContent);
  var steps = data.steps;
  var slider = document.getElementById("replay-slider");
  var index = 0;

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  function name(seat) {
    if (seat === null || seat === undefined) { return L.none; }
    if (seat === "pot" || seat === "house") { return seat; }
    return (data.players[seat] || "?") + " (" + L.seat + " " + seat + ")";
  }

  function card(code) {
    var svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("class", "card" + (RED[code] ? " card-red" : ""));
    svg.setAttribute("viewBox", "0 0 30 44");
    svg.setAttribute("data-card", code);
    svg.setAttribute("role", "img");
    var title = document.createElementNS(SVG, "title");
    title.textContent = code === "CC" ? "Chi chi" : code[0] + " " + SUIT[code[1]];
    svg.appendChild(title);
    var rect = document.createElementNS(SVG, "rect");
    rect.setAttribute("x", "1"); rect.setAttribute("y", "1");
    rect.setAttribute("width", "28"); rect.setAttribute("height", "42");
    rect.setAttribute("rx", "3");
    svg.appendChild(rect);
    var rank = document.createElementNS(SVG, "text");
    rank.setAttribute("x", "15"); rank.setAttribute("y", "20");
    rank.setAttribute("class", "card-rank");
    rank.textContent = code === "CC" ? "CC" : code[0];
    svg.appendChild(rank);
    var suit = document.createElementNS(SVG, "text");
    suit.setAttribute("x", "15"); suit.setAttribute("y", "36");
    suit.setAttribute("class", "card-suit");
    suit.textContent = code === "CC" ? "chi" : SUIT[code[1]];
    svg.appendChild(suit);
    return svg;
  }
  function cards(codes, cls) {
    var row = el("div", "cards " + (cls || ""));
    (codes || []).forEach(function (code) { row.appendChild(card(code)); });
    if (!codes || !codes.length) { row.appendChild(el("span", "cards-empty", L.none)); }
    return row;
  }

  function cuocText(cuoc) {
    // In the rules' order (the catalogue lists the cước in it), whatever the payload's order.
    var known = Object.keys(L.cuoc_names);
    var slugs = Object.keys(cuoc || {}).sort(function (a, b) {
      return (known.indexOf(a) + 1 || 99) - (known.indexOf(b) + 1 || 99);
    });
    return slugs.map(function (slug) {
      var n = cuoc[slug];
      return (L.cuoc_names[slug] || slug) + (n > 1 ? " ×" + n : "");
    }).join(", ");
  }
  function moveText(move) {
    var text = L.moves[move.type] || move.type;
    if (move.card) { text += " " + move.card; }
    if (move["with"]) { text += " + " + move["with"]; }
    if (move.cuoc) { text += " " + cuocText(move.cuoc); }
    if (move.auto) { text += " (" + L.auto + ")"; }
    return text;
  }
  function zoned(z) {
    return z ? z.local + " (" + z.zone + ", " + z.offset + ")" : L.none;
  }
  function timeNode(node, z) {
    node.textContent = zoned(z);
    if (z) {
      node.setAttribute("datetime", z.utc);
      node.setAttribute("title", L.utc + " " + z.utc);
    }
  }
  function faultText(f) {
    return L.fault + ": " + name(f.seat) + " — " + f.slug + " (" + (f.visible ? L.visible : L.hidden) + ")";
  }

  function describe(step) {
    var move = step.move || {};
    var record = step.type === "settled" || step.type === "voided";
    var who = step.seq === 0 || record ? L.system : (step.system ? L.system + " → " : "") + name(step.actor);
    var text = who + ": " + moveText(move);
    if (step.type === "voided" && move.reason) { text += ": " + move.reason; }
    return text;
  }

  function drawSeat(view, seat, step) {
    var box = el("section", "seat");
    box.setAttribute("data-seat", seat.seat);
    if (view.turn_seat === seat.seat) { box.className += " seat-turn"; }
    if (step.actor === seat.seat && step.seq > 0) { box.className += " seat-actor"; }
    var head = el("h3", "seat-name", name(seat.seat));
    if (view.dealer === seat.seat) { head.appendChild(el("span", "seat-tag", L.dealer)); }
    box.appendChild(head);
    box.appendChild(el("div", "seat-label", L.hand + " (" + (seat.hand || []).length + ")"));
    box.appendChild(cards(seat.hand, "seat-hand"));
    box.appendChild(el("div", "seat-label", L.mat));
    var mat = el("div", "seat-mat");
    (seat.mat || []).forEach(function (group) { mat.appendChild(cards(group.cards, "mat-group")); });
    if (!(seat.mat || []).length) { mat.appendChild(el("span", "cards-empty", L.none)); }
    box.appendChild(mat);
    box.appendChild(el("div", "seat-label", L.door));
    box.appendChild(cards(view.doors[seat.seat], "seat-door"));
    (seat.faults || []).forEach(function (f) {
      var fresh = step.new_faults.some(function (n) { return n.seat === seat.seat && n.slug === f.slug && n.move === f.move; });
      box.appendChild(el("div", "seat-fault" + (fresh ? " seat-fault-new" : ""),
        L.fault + ": " + f.slug + (f.visible ? "" : " (" + L.hidden + ")")));
      box.lastChild.title = L.faults[f.slug] || f.slug;
    });
    return box;
  }

  function list(items) {
    var ul = el("ul");
    items.forEach(function (t) { ul.appendChild(el("li", "", t)); });
    return ul;
  }
  function fill(id, node) { var target = $(id); target.textContent = ""; target.appendChild(node); }

  function cell(row, tag, text, cls) { var c = el(tag, cls || "", text); row.appendChild(c); return c; }
  function table(cls, head, rows) {
    var t = el("table", cls);
    var tr = el("tr");
    head.forEach(function (h) { cell(tr, "th", h); });
    var thead = el("thead"); thead.appendChild(tr); t.appendChild(thead);
    var body = el("tbody");
    rows.forEach(function (r) { body.appendChild(r); });
    t.appendChild(body);
    return t;
  }
  function cuocTable(c) {
    var rows = c.rows.map(function (r) {
      var tr = el("tr", r.match ? "cuoc-match" : "cuoc-mismatch");
      tr.setAttribute("data-cuoc", r.slug);
      cell(tr, "td", (L.cuoc_names[r.slug] || r.slug) + (r.enabled ? "" : " (" + L.off + ")"));
      cell(tr, "td", r.declared, "num cuoc-declared");
      cell(tr, "td", r["true"], "num cuoc-true");
      cell(tr, "td", r.diem, "num");
      cell(tr, "td", r.dich, "num");
      return tr;
    });
    var box = el("div");
    box.appendChild(table("cuoc-table", [L.cuoc_name, L.declared, L["true"], L.diem, L.dich], rows));
    var s = function (x) { return x.base + " + " + x.ga + " = " + x.total; };
    var scores = el("table", "cuoc-scores");
    [[L.declared, c.declared_score, "cuoc-declared-score"], [L["true"], c.true_score, "cuoc-true-score"]].forEach(function (r) {
      var tr = el("tr");
      cell(tr, "th", r[0] + " — " + L.score);
      cell(tr, "td", s(r[1]), "num " + r[2]);
      scores.appendChild(tr);
    });
    box.appendChild(scores);
    (c.equally_right || []).forEach(function (reading) {
      box.appendChild(el("p", "cuoc-equally-right", L.equally_right + ": " + cuocText(reading)));
    });
    box.appendChild(el("p", "cuoc-verdict verdict-" + c.verdict, (L.verdicts[c.verdict] || c.verdict) + (c.auto ? " · " + L.auto : "")));
    return box;
  }
  function ledgerTable(entries) {
    var rows = entries.map(function (e) {
      var tr = el("tr", "ledger-entry");
      cell(tr, "td", "#" + e.transaction + " " + e.key + " (" + (L["purpose_" + e.purpose] || e.purpose) + ")");
      cell(tr, "td", e.account + (e.table ? " (" + L.table + " " + e.table + ")" : ""));
      cell(tr, "td", (e.amount > 0 ? "+" : "") + e.amount, "num ledger-amount");
      timeNode(cell(tr, "td", "", "ledger-at").appendChild(el("time")), e.at);
      return tr;
    });
    return table("ledger-table", [L.transaction, L.account, L.amount, L.time], rows);
  }

  function drawEnd(view) {
    var ended = view.outcome !== null && view.outcome !== undefined;
    $("replay-end").hidden = !ended;
    if (!ended) { return; }
    var o = view.outcome;
    var verdict = [L.results[o.result] || o.result];
    if (o.seat !== undefined && o.seat !== null) { verdict.push(name(o.seat)); }
    fill("replay-verdict", el("span", "", verdict.join(" · ")));
    var win = view.win;
    fill("replay-win-card", win && win.card ? card(win.card) : el("span", "", L.none));
    var ended_at = el("time");
    timeNode(ended_at, data.ended);
    fill("replay-ended", ended_at);
    fill("replay-cuoc", data.cuoc ? cuocTable(data.cuoc) : el("span", "", L.none));
    var transfers = ((view.settlement || {}).transfers || []).map(function (t) {
      return name(t.from) + " → " + name(t.to) + ": " + t.points;
    });
    fill("replay-points", transfers.length ? list(transfers) : el("span", "", L.none));
    var quan = data.quan;
    if (quan && quan.seats) {
      var lines = quan.seats.map(function (s) { return name(s.seat) + ": " + L.net + " " + s.net; });
      lines.push(L.fees + ": " + quan.fees);
      fill("replay-quan", list(lines));
    } else {
      fill("replay-quan", el("span", "", L.none));
    }
    fill("replay-ledger", data.ledger && data.ledger.length ? ledgerTable(data.ledger) : el("span", "", L.none));
  }

  function drawLegal(step) {
    var legal = step.legal || { moves: [] };
    var box = $("replay-legal");
    var ul = $("replay-legal-moves");
    ul.textContent = "";
    box.hidden = !legal.moves.length;
    var moves = legal.moves.slice();
    // The rules core lists the auto-declaration only; a declaration of a chosen cước map is
    // accepted too, so it is shown beside it as the choice.
    if (step.move.type === "declare" && !step.move.auto) { moves.push(step.move); }
    moves.forEach(function (m) {
      var chosen = m.type === step.move.type && (m.card || null) === (step.move.card || null) &&
        (m["with"] || null) === (step.move["with"] || null) && !m.auto === !step.move.auto;
      var li = el("li", chosen ? "legal-chosen" : "", moveText(m) + (chosen ? " ✓ " + L.chosen : ""));
      li.setAttribute("data-move", m.type + (m.card ? ":" + m.card : "") + (m["with"] ? "+" + m["with"] : ""));
      ul.appendChild(li);
    });
    $("replay-legal-illegal").hidden = legal.chosen_legal !== false;
  }

  function show(i, updateUrl) {
    index = Math.max(0, Math.min(steps.length - 1, i));
    var step = steps[index];
    var view = step.view;
    slider.value = String(index);
    $("replay-seq").textContent = L.seq + " " + step.seq + " " + L.of + " " + steps[steps.length - 1].seq;
    $("replay-seq").setAttribute("data-seq", step.seq);
    $("replay-event").textContent = describe(step);
    timeNode($("replay-time"), step.at);
    drawLegal(step);
    $("replay-stock").textContent = String(view.stock_count);
    var played = step.move && step.move.card ? step.move.card : (view.offer ? view.offer.card : null);
    fill("replay-offer", played ? card(played) : el("span", "", L.none));
    $("replay-turn").textContent = view.turn_seat === null ? L.none : name(view.turn_seat);
    var faults = $("replay-faults");
    faults.textContent = "";
    faults.hidden = !step.new_faults.length;
    step.new_faults.forEach(function (f) {
      var line = el("div", "fault-marker" + (f.visible ? "" : " fault-hidden"), "⚠ " + faultText(f));
      line.setAttribute("data-fault", f.slug);
      line.title = L.faults[f.slug] || f.slug;
      faults.appendChild(line);
      faults.appendChild(el("div", "fault-why", L.faults[f.slug] || ""));
    });
    var seats = $("replay-seats");
    seats.textContent = "";
    view.seats.forEach(function (seat) { seats.appendChild(drawSeat(view, seat, step)); });
    drawEnd(view);
    $("replay-first").disabled = $("replay-prev").disabled = index === 0;
    $("replay-last").disabled = $("replay-next").disabled = index === steps.length - 1;
    if (updateUrl && window.history && window.history.replaceState) {
      var url = new URL(window.location.href);
      url.searchParams.set("seq", String(step.seq));
      window.history.replaceState(null, "", url.toString());
    }
  }

  function indexOfSeq(seq) {
    for (var i = 0; i < steps.length; i++) { if (steps[i].seq >= seq) { return i; } }
    return steps.length - 1;
  }

  // Labels, title, language links.
  Array.prototype.forEach.call(root.querySelectorAll("[data-label]"), function (node) {
    var key = node.getAttribute("data-label");
    var arrows = { first: ["« ", ""], previous: ["‹ ", ""], next: ["", " ›"], last: ["", " »"] };
    node.textContent = arrows[key] ? arrows[key][0] + L[key] + arrows[key][1] : L[key];
  });
  $("replay-title").textContent = L.title + " " + data.hand + " · " + L.table + " " + data.table +
    " #" + data.number + " · " + L.room + " " + data.room + " · " + L.stake + " " + data.stake;
  if (data.voided) {
    $("replay-void").hidden = false;
    $("replay-void").textContent = L.voided + " " + zoned(data.voided) + ": " + data.void_reason;
  }
  Array.prototype.forEach.call(root.querySelectorAll("[data-lang-link]"), function (a) {
    var url = new URL(window.location.href);
    url.searchParams.set("lang", a.getAttribute("data-lang-link"));
    a.href = url.toString();
  });

  slider.max = String(steps.length - 1);
  // A marker per step where a fault was made, under the slider: a click opens that step.
  var marks = $("replay-marks");
  steps.forEach(function (step, i) {
    if (!step.new_faults.length) { return; }
    var b = el("button", "fault-mark" + (step.new_faults.every(function (f) { return !f.visible; }) ? " fault-hidden" : ""), "⚠ " + step.seq);
    b.type = "button";
    b.setAttribute("data-seq", step.seq);
    b.title = step.new_faults.map(faultText).join("; ");
    b.addEventListener("click", function () { show(i, true); });
    marks.appendChild(b);
  });
  marks.hidden = !marks.childNodes.length;
  slider.addEventListener("input", function () { show(parseInt(slider.value, 10), true); });
  $("replay-first").addEventListener("click", function () { show(0, true); });
  $("replay-prev").addEventListener("click", function () { show(index - 1, true); });
  $("replay-next").addEventListener("click", function () { show(index + 1, true); });
  $("replay-last").addEventListener("click", function () { show(steps.length - 1, true); });
  document.addEventListener("keydown", function (e) {
    if (e.target && (e.target.tagName === "INPUT" || e.target.tagName === "TEXTAREA") && e.target !== slider) { return; }
    var moves = { ArrowLeft: index - 1, ArrowRight: index + 1, Home: 0, End: steps.length - 1 };
    if (e.key in moves) { e.preventDefault(); show(moves[e.key], true); }
  });

  var wanted = new URL(window.location.href).searchParams.get("seq");
  show(wanted !== null && /^\d+$/.test(wanted) ? indexOfSeq(parseInt(wanted, 10)) : 0, false);
}());
