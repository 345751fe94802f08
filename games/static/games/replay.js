/* The replay viewer of a hand (admin, auditors only). The page holds every step as JSON
   (games.admin.hand_replay_steps); this script draws one step at a time: first / previous /
   next / last, the slider, the arrow keys (Home and End too) and ?seq=N deep links. The cards
   are small SVG drawings. Plain JavaScript, no libraries; text only through textContent. */
(function () {
  "use strict";

  var LABELS = {
    en: {
      first: "First", previous: "Previous", next: "Next", last: "Last",
      stock: "Stock", card_played: "Card just played", turn: "To act",
      end: "End of the hand", verdict: "Verdict", cuoc: "Cước", points: "Settlement (points)",
      quan: "Settlement (Quan)", hand: "Hand", mat: "Mat", door: "Door", dealer: "dealer",
      seat: "seat", seq: "Event", of: "of", fault: "Fault", hidden: "hidden",
      voided: "Voided", title: "Hand", table: "table", stake: "stake", room: "room",
      none: "—", system: "the server", deal: "the deal", net: "net", fees: "fees",
      help: "Keys: ← previous, → next, Home first, End last. Link to a step with ?seq=N.",
      moves: {
        deal: "deals", discard: "discards", eat: "eats", chiu: "chíu", draw: "draws",
        pass: "passes", u: "declares ù", declare: "declares the cước", tra_cua: "trả cửa",
        prefs: "changes preferences", bao: "báo", settled: "books the Quan",
        voided: "voids the hand"
      }
    },
    vi: {
      first: "Đầu", previous: "Trước", next: "Sau", last: "Cuối",
      stock: "Nọc", card_played: "Quân vừa đánh", turn: "Đến lượt",
      end: "Kết thúc ván", verdict: "Kết quả", cuoc: "Cước", points: "Thanh toán (điểm)",
      quan: "Thanh toán (Quan)", hand: "Bài trên tay", mat: "Chiếu", door: "Cửa",
      dealer: "cái", seat: "ghế", seq: "Nước", of: "/", fault: "Lỗi", hidden: "ẩn",
      voided: "Đã hủy", title: "Ván", table: "bàn", stake: "tiền cược", room: "phòng",
      none: "—", system: "máy chủ", deal: "chia bài", net: "thực nhận", fees: "phí",
      help: "Phím: ← trước, → sau, Home đầu, End cuối. Liên kết tới một nước: ?seq=N.",
      moves: {
        deal: "chia bài", discard: "đánh", eat: "ăn", chiu: "chíu", draw: "bốc",
        pass: "dưới", u: "ù", declare: "xướng cước", tra_cua: "trả cửa",
        prefs: "đổi tùy chọn", bao: "báo", settled: "ghi sổ Quan",
        voided: "hủy ván"
      }
    }
  };
  var RED = { CC: 1, "8V": 1, "8S": 1, "9V": 1, "9S": 1 };
  var SUIT = { V: "Vạn", N: "Văn", S: "Sách" };
  var SVG = "http://www.w3.org/2000/svg";

  var root = document.getElementById("replay");
  var data = JSON.parse(document.getElementById("replay-data").textContent);
  var lang = LABELS[root.getAttribute("data-lang")] ? root.getAttribute("data-lang") : "en";
  var L = LABELS[lang];
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

  function describe(step) {
    var move = step.move || {};
    var record = step.type === "settled" || step.type === "voided";
    var who = step.seq === 0 || record ? L.system : (step.system ? L.system + " → " : "") + name(step.actor);
    var verb = L.moves[move.type] || move.type;
    var text = who + ": " + verb;
    if (move.card) { text += " " + move.card; }
    if (move["with"]) { text += " + " + move["with"]; }
    if (move.cuoc) { text += " " + JSON.stringify(move.cuoc); }
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
    });
    return box;
  }

  function list(items) {
    var ul = el("ul");
    items.forEach(function (t) { ul.appendChild(el("li", "", t)); });
    return ul;
  }
  function fill(id, node) { var target = $(id); target.textContent = ""; target.appendChild(node); }

  function drawEnd(view) {
    var ended = view.outcome !== null && view.outcome !== undefined;
    $("replay-end").hidden = !ended;
    if (!ended) { return; }
    var o = view.outcome;
    var verdict = [o.result || JSON.stringify(o)];
    if (o.seat !== undefined && o.seat !== null) { verdict.push(name(o.seat)); }
    if (view.win && view.win.card) { verdict.push(view.win.card); }
    fill("replay-verdict", el("span", "", verdict.join(" · ")));
    fill("replay-cuoc", el("code", "", view.declaration ? JSON.stringify(view.declaration) : L.none));
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
  }

  function show(i, updateUrl) {
    index = Math.max(0, Math.min(steps.length - 1, i));
    var step = steps[index];
    var view = step.view;
    slider.value = String(index);
    $("replay-seq").textContent = L.seq + " " + step.seq + " " + L.of + " " + steps[steps.length - 1].seq;
    $("replay-seq").setAttribute("data-seq", step.seq);
    $("replay-event").textContent = describe(step) + " · " + step.at;
    $("replay-stock").textContent = String(view.stock_count);
    var played = step.move && step.move.card ? step.move.card : (view.offer ? view.offer.card : null);
    fill("replay-offer", played ? card(played) : el("span", "", L.none));
    $("replay-turn").textContent = view.turn_seat === null ? L.none : name(view.turn_seat);
    var faults = $("replay-faults");
    faults.textContent = "";
    faults.hidden = !step.new_faults.length;
    step.new_faults.forEach(function (f) {
      faults.appendChild(el("div", "", "⚠ " + L.fault + ": " + name(f.seat) + " — " + f.slug));
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
    $("replay-void").textContent = L.voided + " " + data.voided + ": " + data.void_reason;
  }
  Array.prototype.forEach.call(root.querySelectorAll("[data-lang-link]"), function (a) {
    var url = new URL(window.location.href);
    url.searchParams.set("lang", a.getAttribute("data-lang-link"));
    a.href = url.toString();
  });

  slider.max = String(steps.length - 1);
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
