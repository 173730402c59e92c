// A run's deals, and one deal's two duplicate tables side by side, stepped action by action.
"use strict";
const RUN = new URLSearchParams(location.search).get("run") || "";
let D = null, step = 0, current = null, timer = null;

function position(seat, n) {
  if (n === 4) return ["top", "right", "bottom", "left"][seat];
  if (n === 2) return ["bottom", "top"][seat];
  if (n === 3) return ["bottom", "left", "right"][seat];
  return ["top", "right", "bottom", "left", "extra"][seat];
}

async function loadDeals() {
  const err = document.getElementById("error");
  try {
    const data = await getJSON(`/api/deals?run=${encodeURIComponent(RUN)}`);
    err.textContent = "";
    document.getElementById("count").textContent = `${data.rows} rows, ${data.deals.length} deals`;
    const t = document.getElementById("deals");
    t.textContent = "";
    t.append(el("tr", {}, ...["Deal", "Hand", "Pair", "Side 0 gained", "Side 1 gained"].map((x) => el("th", { text: x }))));
    for (const d of data.deals) {
      const gain = (s) => (d.sides[s] ? d.sides[s].map((v) => (v >= 0 ? "+" : "") + v).join(" / ") : "–");
      const key = `${d.deal}/${d.hand}/${d.pair}`;
      const row = el("tr", { class: current === key ? "on" : "", "data-deal": d.deal, "data-hand": d.hand, onclick: () => openDeal(d.deal, d.hand, d.pair) },
        el("td", { text: d.deal }), el("td", { text: d.hand }), el("td", { text: d.pair }), el("td", { text: gain("0") }), el("td", { text: gain("1") }));
      t.append(row);
    }
  } catch (e) { err.textContent = e.message; }
}

async function openDeal(deal, hand, pair) {
  current = `${deal}/${hand}/${pair}`;
  D = await getJSON(`/api/deal?run=${encodeURIComponent(RUN)}&deal=${deal}&hand=${hand}&pair=${encodeURIComponent(pair)}`);
  step = 0;
  document.getElementById("viewer").hidden = false;
  for (const tr of document.querySelectorAll("#deals tr")) tr.classList.toggle("on", tr.dataset.deal === String(deal) && tr.dataset.hand === String(hand));
  draw();
}

function maxStep() { return Math.max(...D.sides.map((s) => s.frames.length - 1)); }

function draw() {
  const box = document.getElementById("sides");
  box.textContent = "";
  const diff = D.first_difference;
  document.getElementById("step-info").textContent = `action ${step} of ${maxStep()}`;
  document.getElementById("diff-info").textContent = diff === null ? "both tables played the same" :
    `the tables first differ at action ${diff + 1}`;
  D.sides.forEach((side) => {
    const f = side.frames[Math.min(step, side.frames.length - 1)];
    const n = f.hands.length;
    const felt = el("div", { class: "felt" });
    const center = el("div", { class: "center" });
    for (let s = 0; s < n; s++) {
      const hand = el("div", { class: "hand" });
      for (const c of f.hands[s]) hand.append(cardEl(c, "small"));
      felt.append(el("div", { class: `seat pos-${position(s, n)}`, "data-seat": s },
        el("div", { class: "who", text: `${SEAT_NAMES[s]}: ${side.seats[s]}` }),
        el("div", { class: "stat", text: `bid ${bidText(f.bids[s], side.blind[s])} · tricks ${f.tricks_won[s]}` }), hand));
      if (f.trick[s]) center.append(el("div", { class: `c-${position(s, n)}` }, cardEl(f.trick[s])));
    }
    const a = f.action;
    const here = a && diff !== null && a.index === diff;
    center.append(el("div", { class: "msg" }, a ? `${a.who}: ${a.text}${a.trick ? ` (trick ${a.trick})` : ""}` : "the deal", here ? el("div", {}, el("span", { class: "diff-mark", text: "first difference" })) : null));
    felt.append(center);
    const gained = side.hand_score.map((v, k) => el("span", { class: v >= 0 ? "gain-pos" : "gain-neg", text: `${side.teams ? side.teams[k] : "team " + k}: ${v >= 0 ? "+" : ""}${v}` }));
    const head = el("h2", {}, `Side ${side.side}: `);
    gained.forEach((g, k) => { if (k) head.append(" · "); head.append(g); });
    box.append(el("div", { class: "side", "data-side": side.side }, head, felt,
      el("p", { class: "last-action", text: a ? `${a.who} ${a.text}` : "" }),
      el("p", { class: "muted", text: `bids ${side.bids.map((b, s) => bidText(b, side.blind[s])).join(", ")} · tricks ${side.tricks.join(", ")} · score ${side.scores_before.join("/")} → ${side.scores.join("/")}` })));
  });
}

function go(to) { if (!D) return; step = Math.max(0, Math.min(maxStep(), to)); draw(); }
document.getElementById("first").onclick = () => go(0);
document.getElementById("prev").onclick = () => go(step - 1);
document.getElementById("next").onclick = () => go(step + 1);
document.getElementById("last").onclick = () => go(maxStep());
document.getElementById("jump-diff").onclick = () => { if (D && D.first_difference !== null) go(D.first_difference + 1); };
document.addEventListener("keydown", (e) => {
  if (e.key === "ArrowRight") go(step + 1);
  else if (e.key === "ArrowLeft") go(step - 1);
  else if (e.key === "Home") go(0);
  else if (e.key === "End") go(maxStep());
  else if (e.key === "d") document.getElementById("jump-diff").click();
});
document.getElementById("follow").addEventListener("change", (e) => {
  clearInterval(timer);
  if (e.target.checked) timer = setInterval(loadDeals, 2000);
});
document.getElementById("run").textContent = RUN;
loadDeals();
