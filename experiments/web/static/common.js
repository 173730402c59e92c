// Shared by the pages: card drawing and small helpers. No framework, no build step.
"use strict";
const SUITS = ["♠", "♥", "♦", "♣", "★"];
const SEAT_NAMES = ["North", "East", "South", "West", "Seat 4"];

function el(tag, attrs = {}, ...kids) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids) if (kid !== null && kid !== undefined) node.append(kid);
  return node;
}

const SUIT_WORDS = ["spades", "hearts", "diamonds", "clubs"];
const RANK_WORDS = { A: "ace", K: "king", Q: "queen", J: "jack", T: "ten", 9: "nine", 8: "eight", 7: "seven",
  6: "six", 5: "five", 4: "four", 3: "three", 2: "two" };

// a card's name in words: "ten of spades", "big joker" (the faces say T, BJ, LJ)
function cardName(card) {
  const rank = card.label.replace(/[♠♥♦♣]/, "");
  if (card.suit === 4) return rank === "BJ" ? "big joker" : rank === "LJ" ? "little joker" : rank;
  return `${RANK_WORDS[rank] || rank} of ${SUIT_WORDS[card.suit]}`;
}

function cardEl(card, extra = "") {
  const rank = card.label.replace(/[♠♥♦♣]/, "");
  const name = cardName(card);
  const node = el("span", { class: `card s${card.suit} ${extra}`, "data-card": card.id, role: "img", "aria-label": name, title: name });
  node.append(el("span", { text: rank, "aria-hidden": "true" }), el("span", { class: "pip", "aria-hidden": "true", text: SUITS[card.suit] === "★" ? "" : SUITS[card.suit] }));
  return node;
}

function keyQuery() {
  const key = new URLSearchParams(location.search).get("key");
  return key ? `?key=${encodeURIComponent(key)}` : "";
}

async function getJSON(url) {
  const r = await fetch(url, { credentials: "same-origin" });
  const data = await r.json();
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}

function bidText(bid, blind) {
  if (bid < 0) return "–";
  if (bid === 0) return blind ? "blind nil" : "nil";
  return String(bid);
}
