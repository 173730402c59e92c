// A run's deals, and one deal's two duplicate tables side by side, stepped action by action.
"use strict";
const QUERY = new URLSearchParams(location.search);
const RUN = QUERY.get("run") || "";
// D: the deal shown; IMPORTED: the hands of an opened record file (not on the server)
let D = null, step = 0, current = null, timer = null, IMPORTED = null, opened = null;

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

async function openDeal(deal, hand, pair, at = 0) {
  current = `${deal}/${hand}/${pair}`;
  opened = { deal, hand, pair };
  if (IMPORTED) D = IMPORTED[deal - 1];
  else D = await getJSON(`/api/deal?run=${encodeURIComponent(RUN)}&deal=${deal}&hand=${hand}&pair=${encodeURIComponent(pair)}&showdown=1`);
  step = Math.max(0, Math.min(maxStep(), at));
  document.getElementById("export-deal").hidden = !!IMPORTED;
  document.getElementById("export-deal").href = `/api/export?run=${encodeURIComponent(RUN)}&deal=${deal}&hand=${hand}&pair=${encodeURIComponent(pair)}`;
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
  // one table (a web game, a saved game, a record file) has nothing to compare
  const one = D.sides.length < 2;
  document.getElementById("jump-diff").hidden = one;
  document.getElementById("diff-info").textContent = one ? "one table" : diff === null ? "both tables played the same" :
    `the tables first differ at action ${diff + 1}`;
  shareLink();
  drawClaim();
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

// the address of this deal at this decision: opening it shows the same position
function shareLink() {
  const box = document.getElementById("share-link");
  box.closest("label").hidden = !!IMPORTED;
  if (IMPORTED || !opened) return;
  const q = new URLSearchParams({ run: RUN, deal: opened.deal, hand: opened.hand, pair: opened.pair, step });
  const url = `${location.origin}/replay?${q}`;
  box.value = url;
  history.replaceState(null, "", `/replay?${q}`);
}

// the showdown: once every way of playing the rest ends the same, the rest is claimed
function drawClaim() {
  const box = document.getElementById("claim");
  const on = document.getElementById("showdown").checked;
  const side = D.sides[0];
  const c = on && side.claims ? side.claims[Math.min(step, side.claims.length - 1)] : null;
  box.hidden = !c;
  box.textContent = "";
  if (!c) return;
  const n = side.frames[0].hands.length;
  const rest = c.rest.map((t, s) => `${SEAT_NAMES[s]} ${t}`).join(", ");
  box.append(el("strong", { text: "Showdown: " }),
    `whatever is played, the last ${c.tricks_left} trick${c.tricks_left === 1 ? "" : "s"} go ${rest} (tricks in all: ${c.tricks.slice(0, n).join(", ")}). `,
    el("button", { id: "claim-rest", text: "claim the rest", onclick: () => go(side.frames.length - 1) }));
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
document.getElementById("showdown").addEventListener("change", () => { if (D) drawClaim(); });
document.getElementById("export-run").href = `/api/export?run=${encodeURIComponent(RUN)}`;

// a record file from this machine: checked by the server action by action, then listed
document.getElementById("import-file").addEventListener("change", async (e) => {
  const file = e.target.files[0];
  const err = document.getElementById("error");
  if (!file) return;
  try {
    const r = await fetch("/api/import", { method: "POST", body: await file.text(), credentials: "same-origin", headers: { "Content-Type": "application/x-ndjson" } });
    const data = await r.json();
    if (!r.ok) throw new Error(data.error || r.statusText);
    err.textContent = "";
    clearInterval(timer);
    IMPORTED = data.hands;
    document.getElementById("run").textContent = file.name;
    document.getElementById("count").textContent = `${IMPORTED.length} hand(s) from ${file.name}, every action checked against the rules`;
    const t = document.getElementById("deals");
    t.textContent = "";
    t.append(el("tr", {}, ...["Hand", "Gained"].map((x) => el("th", { text: x }))));
    IMPORTED.forEach((d, k) => t.append(el("tr", { "data-deal": k + 1, "data-hand": d.hand, onclick: () => openDeal(k + 1, d.hand, "") },
      el("td", { text: d.hand + 1 }), el("td", { text: d.sides[0].hand_score.map((v) => (v >= 0 ? "+" : "") + v).join(" / ") }))));
    openDeal(1, IMPORTED[0].hand, "");
  } catch (ex) { err.textContent = `${file.name}: ${ex.message}`; }
});

document.getElementById("run").textContent = RUN;
loadDeals().then(() => {  // a shared link: the deal at its decision
  if (QUERY.get("deal") === null) return;
  openDeal(Number(QUERY.get("deal")), Number(QUERY.get("hand") || 0), QUERY.get("pair") || "", Number(QUERY.get("step") || 0))
    .catch((e) => { document.getElementById("error").textContent = `that link: ${e.message}`; });
});
