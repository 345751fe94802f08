/**
 * The cards, drawn in SVG by the page itself (no image, no font download): the numeral as the
 * deck prints it, in Hán strokes (二 … 九) drawn as paths, the suit's name beneath, Chi Chi with
 * its own face; the five red kinds (CC, 8V, 8S, 9V, 9S) in red; the Vietnamese name as the
 * SVG's <title> and aria-label (what a screen reader says, what a pointer shows on hover).
 */

import type { Catalogue } from "./i18n.js";

const SVG = "http://www.w3.org/2000/svg";
export const RED_CODES = new Set(["CC", "8V", "8S", "9V", "9S"]);
export const SUITS = ["V", "N", "S"] as const;

/** The Hán numerals 二 … 九 as strokes on a 20 × 20 grid. */
const NUMERAL_STROKES: Record<number, string> = {
  2: "M5 6h10 M2 15h16",
  3: "M4 4h12 M5 10h10 M2 16h16",
  4: "M3 4h14v13H3z M8 4v5c0 3-1 5-3 6 M12 4v8c0 1 1 2 2 2h3",
  5: "M3 4h14 M9 4l-2 12 M5 9h9v8 M2 17h16",
  6: "M10 2v3 M3 6h14 M8 10l-4 7 M12 10l4 7",
  7: "M2 10l16-3 M8 2v12c0 3 2 4 9 4",
  8: "M8 4c0 6-2 10-6 14 M12 4c1 6 3 10 6 14",
  9: "M9 2c0 8-1 13-6 17 M3 7h8v9c0 2 2 3 7 2",
};

export function cardName(code: string, t: Catalogue): string {
  if (code === "CC") return t.card_names.CC;
  const rank = Number(code[0]);
  const suit = code[1] as "V" | "N" | "S";
  return `${t.ranks[rank]} ${t.card_names[suit]}`;
}

function el<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

/** One card as an SVG image: 40 × 64 user units, scaled by CSS. */
export function cardSvg(code: string, t: Catalogue): SVGSVGElement {
  const name = cardName(code, t);
  const red = RED_CODES.has(code);
  const ink = red ? "#b3001b" : "#1a1a1a";
  const svg = el("svg", { viewBox: "0 0 40 64", role: "img", "aria-label": name, class: "card" });
  svg.dataset.card = code;
  if (red) svg.classList.add("red");
  const title = el("title", {});
  title.textContent = name;
  svg.append(title);
  svg.append(el("rect", { x: 1, y: 1, width: 38, height: 62, rx: 4, fill: "#fbf5e6", stroke: "#6b5b3e", "stroke-width": 1.2 }));
  svg.append(el("rect", { x: 4, y: 4, width: 32, height: 56, rx: 2, fill: "none", stroke: ink, "stroke-width": 0.6 }));
  if (code === "CC") {
    // Chi Chi: a figure's head and robe, its name beneath
    svg.append(el("circle", { cx: 20, cy: 18, r: 6, fill: "none", stroke: ink, "stroke-width": 1.8 }));
    svg.append(el("path", { d: "M10 40c2-8 6-12 10-12s8 4 10 12z", fill: ink }));
    const label = el("text", { x: 20, y: 53, "text-anchor": "middle", "font-size": 8, "font-weight": 700, fill: ink, "font-family": "sans-serif" });
    label.textContent = "CHI";
    svg.append(label);
    return svg;
  }
  const rank = Number(code[0]);
  const suit = code[1] as "V" | "N" | "S";
  const numeral = el("path", {
    d: NUMERAL_STROKES[rank] ?? "",
    transform: "translate(8 7) scale(1.2)",
    fill: "none",
    stroke: ink,
    "stroke-width": 2.2,
    "stroke-linecap": "round",
    "stroke-linejoin": "round",
  });
  svg.append(numeral);
  const suitLabel = el("text", { x: 20, y: 46, "text-anchor": "middle", "font-size": 10, "font-weight": 700, fill: ink, "font-family": "serif" });
  suitLabel.textContent = t.card_names[suit];
  svg.append(suitLabel);
  const short = el("text", { x: 20, y: 57, "text-anchor": "middle", "font-size": 7, fill: ink, "font-family": "sans-serif" });
  short.textContent = code;
  svg.append(short);
  return svg;
}

export interface Groups {
  chan: string[][];
  ca: string[][];
  ba_dau: string[][];
  que: string[];
}

/** A hand grouped as a player groups it, where the server's analysis does not (advanced mode):
 * chắn (two of a kind), then ba đầu (one rank in its three suits), then cạ (one rank, two
 * suits), the rest què. */
export function groupHand(cards: readonly string[]): Groups {
  const left = [...cards].sort(compareCards);
  const take = (code: string) => left.splice(left.indexOf(code), 1)[0]!;
  const chan: string[][] = [];
  for (let i = 0; i + 1 < left.length; ) {
    if (left[i] === left[i + 1]) chan.push(left.splice(i, 2));
    else i++;
  }
  const ba_dau: string[][] = [];
  const ca: string[][] = [];
  for (let rank = 2; rank <= 9; rank++) {
    const present = SUITS.map((s) => `${rank}${s}`).filter((c) => left.includes(c));
    if (present.length === 3) ba_dau.push(present.map(take));
    else if (present.length === 2) ca.push(present.map(take));
  }
  return { chan, ca, ba_dau, que: left };
}

export function compareCards(a: string, b: string): number {
  const key = (c: string) => (c === "CC" ? 99 : Number(c[0]) * 3 + SUITS.indexOf(c[1] as "V"));
  return key(a) - key(b);
}
