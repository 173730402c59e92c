// A seat at a table: draws the seat's view the server sends, sends the person's moves.
// The server checks everything; this page only offers what the view says is legal.
"use strict";
const TOKEN = location.pathname.split("/").pop();  // the seat token (a ?key= stays in the query)
let ws = null, S = null, selected = 0, retry = 500, shownReview = null, keyboard = false, hinted = null;
window.spadesFrames = [];  // what the server sent (the tests read it)
window.spadesSounds = 0;  // turn sounds played (the tests read it)
const BASE_TITLE = document.title;
const PHASE_WORDS = { blind: "blind nil, or see your cards", bid: "your bid", exchange: "pass a card to your partner",
  play: "play a card", trump: "name the trump suit", draw: "keep or discard the card you see" };
let wasMyTurn = false, trickSeen, overSeen = false, audio = null;

function connect() {
  const proto = location.protocol === "https:" ? "wss" : "ws";
  ws = new WebSocket(`${proto}://${location.host}/ws/${TOKEN}${location.search}`);
  const status = document.getElementById("status");
  ws.onopen = () => { status.textContent = "connected"; status.className = "status"; retry = 500; };
  ws.onclose = (ev) => {
    status.className = "status off";
    if (ev.code === 4404) { status.textContent = "unknown seat link"; return; }
    if (ev.code === 4429) { status.textContent = "disconnected (too many messages or connections)"; return; }
    status.textContent = "reconnecting…";
    setTimeout(connect, retry);
    retry = Math.min(retry * 2, 8000);
  };
  ws.onmessage = (ev) => {
    window.spadesFrames.push(ev.data);
    const msg = JSON.parse(ev.data);
    if (msg.type === "state") { S = msg; window.spadesState = msg; render(); }
    else if (msg.type === "error") showError(msg.error);
    else if (msg.type === "hint") showHint(msg);
    else if (msg.type === "review") showReview(msg.review);
  };
}

function send(msg) { if (ws && ws.readyState === 1) ws.send(JSON.stringify(msg)); }
function showError(text) { document.getElementById("error").textContent = text; }

// seats around the table, the viewer at the bottom
function position(seat) {
  const n = S.rules.players, rel = (seat - S.seat + n) % n;
  if (n === 4) return ["bottom", "left", "top", "right"][rel];
  if (n === 2) return ["bottom", "top"][rel];
  if (n === 3) return ["bottom", "left", "right"][rel];
  return ["bottom", "left", "top", "right", "extra"][rel];
}

function render() {
  const r = S.rules;
  document.getElementById("info").textContent =
    `${r.name} to ${r.target} · ${S.game_over ? `game over after ${S.sheet.length} hand${S.sheet.length === 1 ? "" : "s"}` : `hand ${S.hand_no + 1}`} · you are ${SEAT_NAMES[S.seat]}`;
  const scores = document.getElementById("scores");
  scores.textContent = "";
  S.teams.forEach((t, k) => scores.append(el("span", { class: "team-score", "data-team": k, text: `${t.name}: ${S.scores[k]} (${S.bags[k]} bags)` })));
  drawFelt();
  drawHand();
  drawPrompt();
  drawSheet();
  drawFailure();
  const events = document.getElementById("events");
  events.textContent = "";
  for (const e of S.events) events.append(el("li", { text: e }));
  events.scrollTop = events.scrollHeight;
  document.getElementById("hint-default").textContent = `${S.hint_agent} (this table's)`;
  const pick = document.getElementById("review-pick");
  if (S.reviews.length) {
    document.getElementById("review-panel").hidden = false;
    const have = [...pick.options].map((o) => o.value);
    for (const h of S.reviews) if (!have.includes(String(h + 1))) pick.append(el("option", { value: h + 1, text: `hand ${h + 1}` }));
    const newest = S.reviews[S.reviews.length - 1] + 1;
    if (shownReview !== newest) { shownReview = newest; pick.value = newest; send({ type: "review", hand: newest }); }
    // a review whose early cards were being judged in points is complete: shown again
    const pending = new Set(S.reviews_pending || []);
    const picked = Number(pick.value) - 1;
    if (pendingReviews.has(picked) && !pending.has(picked)) send({ type: "review", hand: picked + 1 });
    pendingReviews = pending;
  }
  if (!document.getElementById("last-out").hidden) showLast();
  alerts();
}

// who a seat is to this page's person
function roleOf(seat) {
  if (seat === S.seat) return "you";
  if (S.rules.partnerships && S.rules.players === 4 && seat === (S.seat + 2) % 4) return "your partner";
  return "opponent";
}

// a turn's alerts: the tab's title, a line for screen readers, and the sound if wanted;
// a finished trick's winner and the game's end are announced too
function alerts() {
  const mine = S.your_turn && !S.game_over;
  document.title = mine ? `▶ Your turn — ${BASE_TITLE}` : BASE_TITLE;
  const say = [];
  const last = S.last_trick;
  const key = last ? last.plays.map((p) => p.card.id).join(",") : null;
  if (trickSeen !== undefined && key && key !== trickSeen) {
    say.push(`${SEAT_NAMES[last.winner]} (${roleOf(last.winner)}) took trick ${last.number}.`);
  }
  trickSeen = key;
  if (mine && !wasMyTurn) {
    say.push(`Your turn: ${PHASE_WORDS[S.phase] || S.phase}.`);
    if (document.getElementById("sound").checked) turnSound();
  }
  if (S.game_over && !overSeen) say.push(document.getElementById("turn-msg").textContent + ".");
  overSeen = S.game_over;
  wasMyTurn = mine;
  if (say.length) document.getElementById("announce").textContent = say.join(" ");
}

// a short two-note chime (Web Audio: nothing to download)
function turnSound() {
  window.spadesSounds += 1;
  try {
    audio = audio || new AudioContext();
    for (const [at, hz] of [[0, 660], [0.12, 880]]) {
      const osc = audio.createOscillator(), gain = audio.createGain();
      osc.frequency.value = hz;
      gain.gain.setValueAtTime(0.15, audio.currentTime + at);
      gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + at + 0.25);
      osc.connect(gain).connect(audio.destination);
      osc.start(audio.currentTime + at);
      osc.stop(audio.currentTime + at + 0.25);
    }
  } catch (e) { /* no audio here: the title and the announcement still tell */ }
}

function drawFelt() {
  const felt = document.getElementById("felt");
  felt.textContent = "";
  const center = el("div", { class: "center" });
  for (const p of S.players) {
    const pos = position(p.seat);
    const bid = S.bids[p.seat];
    const role = roleOf(p.seat);
    const away = S.present && !S.present[p.seat];
    const box = el("div", { class: `seat pos-${pos}${S.to_act === p.seat ? " turn" : ""}${away ? " is-away" : ""}`, "data-seat": p.seat },
      el("div", { class: "who", text: `${p.title}: ${p.name}${role === "you" ? (p.name !== "you" ? " (you)" : "") : ` (${role})`}` }),
      el("div", { class: "stat", text: `bid ${bidText(bid, S.blind[p.seat])} · tricks ${S.tricks_won[p.seat]}${S.dealer === p.seat ? " · dealer" : ""}` }));
    if (away) box.append(el("div", {}, el("span", { class: "away", text: S.to_act === p.seat ? "away: the table waits for them" : "away (disconnected)" })));
    const left = S.cards_left ? S.cards_left[p.seat] : 0;
    if (!p.you && left && !(S.open_hands && S.open_hands[p.seat].length)) {
      const fan = el("span", { class: "fan", "aria-hidden": "true" });
      for (let i = 0; i < left; i++) fan.append(el("span", { class: "card back" }));
      box.append(el("div", { class: "backs", "data-left": left }, fan, el("span", { class: "count", text: `${left} card${left === 1 ? "" : "s"}` })));
    }
    if (S.open_hands && S.open_hands[p.seat].length) {
      const h = el("div", { class: "hand" });
      for (const c of S.open_hands[p.seat]) h.append(cardEl(c, "small"));
      box.append(h);
    }
    felt.append(box);
    const c = S.trick[p.seat];
    if (c) center.append(el("div", { class: `c-${pos}` }, cardEl(c)));
  }
  // a trick just taken stays on the table (dimmed) until the next card is led
  const last = S.last_trick;
  if (S.trick.every((c) => !c) && last && S.phase === "play" && last.number === S.tricks_played) {
    for (const play of last.plays) center.append(el("div", { class: `c-${position(play.seat)} taken` }, cardEl(play.card)));
  }
  let msg = "";
  const taken = last && S.trick.every((c) => !c) && S.phase === "play" && last.number === S.tricks_played;
  if (S.game_over) msg = `Game over: ${S.teams[S.winner] ? S.teams[S.winner].name : "?"} win${S.rules.partnerships ? "" : "s"}`;
  else if (taken) msg = `${SEAT_NAMES[last.winner]} took trick ${last.number}` + (S.your_turn ? " · your lead" : "");
  else if (S.your_turn) msg = "Your turn";
  else if (S.to_act >= 0) msg = `${SEAT_NAMES[S.to_act]} to ${S.phase === "play" ? "play" : S.phase}` + (S.present && !S.present[S.to_act] ? " (away: waiting for them)" : "");
  center.append(el("div", { class: "msg", id: "turn-msg", text: msg }));
  felt.append(center);
}

// a seat whose agent failed: what it did, and what the person can do about it
function drawFailure() {
  const box = document.getElementById("failure");
  const f = S.failure;
  box.hidden = !f;
  if (!f) return;
  const who = f.seat >= 0 ? `${SEAT_NAMES[f.seat]} (${f.agent})` : f.agent;
  document.getElementById("failure-text").textContent = `${who} failed: ${f.what}. The game waits for you.`;
}

async function loadAgents() {
  try {
    const data = await getJSON("/api/options");
    const pick = document.getElementById("failure-agent");
    const hint = document.getElementById("hint-agent");
    for (const a of data.catalogue) {
      pick.append(el("option", { value: a.name, text: `${a.name} — ${a.help}`, selected: a.name === "heuristic" }));
      hint.append(el("option", { value: a.name, text: `${a.name} — ${a.help}` }));
    }
  } catch (e) { /* the table plays on without the list */ }
}

function legalCards() {
  return S.phase === "play" || S.phase === "exchange" ? new Set(S.legal.map((a) => a.action)) : new Set();
}

function drawHand() {
  const hand = document.getElementById("hand");
  // a card that had the focus keeps it across the redraw (or the first playable card does)
  const active = document.activeElement;
  const hadFocus = active === hand || (active && active.parentElement === hand);
  const focused = hadFocus && active.dataset.card !== undefined ? Number(active.dataset.card) : null;
  hand.textContent = "";
  if (S.hand_hidden) { for (let i = 0; i < S.rules.hand_size; i++) hand.append(el("span", { class: "card back", "aria-hidden": "true" })); return; }
  const legal = legalCards();
  const choices = choiceList();
  S.hand.forEach((c) => {
    const isLegal = legal.has(c.id);
    const node = cardEl(c, S.your_turn && legal.size ? (isLegal ? "legal" : "dim") : "");
    if (S.your_turn && legal.size) {
      // in the Tab order: Enter or Space plays it; a card not playable now says so (and
      // playing it is refused with the reason)
      node.tabIndex = 0;
      node.setAttribute("role", "button");
      node.setAttribute("aria-label", cardName(c) + (isLegal ? "" : ", not playable now"));
      node.addEventListener("click", () => play(c.id));
      node.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); e.stopPropagation(); play(c.id); }
      });
      if (keyboard && choices[selected] === c.id) node.classList.add("selected");
      if (hinted === c.id) node.classList.add("hinted");
    }
    hand.append(node);
  });
  if (hadFocus) {
    const again = hand.querySelector(`.card[tabindex][data-card="${focused}"]`) || hand.querySelector(".card.legal[tabindex]");
    (again || hand).focus();
  }
}

// the actions offered as buttons (bids, blind nil, trump, draw), or the legal cards
function choiceList() {
  if (!S || !S.your_turn) return [];
  return S.legal.map((a) => a.action);
}

function drawPrompt() {
  const prompt = document.getElementById("prompt");
  prompt.textContent = "";
  if (S.game_over) { prompt.append(el("strong", { text: "The game is over. " }), el("a", { href: "/", text: "Set up a new table" })); return; }
  if (!S.your_turn) { prompt.append(el("span", { class: "muted", text: "Waiting for the other seats…" })); return; }
  const cards = legalCards();
  const question = { blind: "Blind nil? Decide before you look at your cards:", bid: "Your bid:", exchange: "Pass a card to your partner (click it):",
    play: "Your card: click a highlighted card", trump: "Name the trump suit:", draw: "Keep the card you see, or discard it and take the next:" }[S.phase];
  prompt.append(el("strong", { text: question }));
  if (S.looking) prompt.append(cardEl(S.looking, "small"));
  if (cards.size) return;
  S.legal.forEach((a, i) => {
    prompt.append(el("button", { class: `act${keyboard && i === selected ? " selected" : ""}${hinted === a.action ? " hinted" : ""}`, "data-action": a.action, title: a.text, text: a.label, onclick: () => play(a.action) }));
  });
}

function play(action) {
  showError("");
  document.getElementById("hint-out").textContent = "";
  send({ type: "act", action, move: S.moves });
  selected = 0;
  hinted = null;
}

// a signed number of points: "+62", "-38", "0"
function signed(v) { return `${v > 0 ? "+" : ""}${v}`; }

// one team's hand as the engine scored it: contract made or set, each nil, bags, penalty
function sheetParts(t) {
  const parts = [];
  if (t.made !== null) parts.push(`bid ${t.label}, took ${t.judged}: ${t.made ? "made" : "set"} ${signed(t.contract_points)}`);
  else if (t.contract_points) parts.push(`tricks ${signed(t.contract_points)}`);
  for (const n of t.nils) parts.push(`${SEAT_NAMES[n.seat]} ${n.blind ? "blind nil" : "nil"} ${n.made ? "kept" : `broken (${n.tricks} trick${n.tricks === 1 ? "" : "s"})`} ${signed(n.points)}`);
  if (t.bags_gained) parts.push(`${t.bags_gained} bag${t.bags_gained === 1 ? "" : "s"}`);
  if (t.penalty) parts.push(`bag penalty −${t.penalty}`);
  return parts.join(" · ");
}

function drawSheet() {
  const t = document.getElementById("sheet");
  t.textContent = "";
  const head = el("tr", {}, el("th", { text: "Hand" }));
  for (const team of S.teams) head.append(el("th", { text: team.name }));
  t.append(head);
  for (const h of S.sheet) {
    // the hand's net change (points less the bag penalty) and the running total
    const row = el("tr", { class: "sheet-hand", "data-hand": h.hand }, el("td", { text: h.hand }));
    h.teams.forEach((team) => row.append(el("td", { class: team.penalty ? "sheet-penalty" : "", text: `${signed(team.net)} → ${team.total}` })));
    const parts = el("tr", { class: "sheet-parts", "data-hand": h.hand }, el("td", {}));
    h.teams.forEach((team) => parts.append(el("td", { class: "muted", text: `${sheetParts(team)} · ${team.bags} bag${team.bags === 1 ? "" : "s"} held` })));
    t.append(row, parts);
  }
  // during a game: the scores now and this hand's bids; after it: the final scores
  const now = el("tr", {}, el("td", { text: S.game_over ? "final" : "now" }));
  S.teams.forEach((team, k) => now.append(el("td", { class: "sheet-now", text: `${S.scores[k]} (${S.bags[k]} bags)` + (S.game_over ? "" : ` · bid ${team.contract}`) })));
  t.append(now);
}

function showHint(h) {
  hinted = h.action;
  drawHand(); drawPrompt();
  const out = document.getElementById("hint-out");
  out.textContent = "";
  const label = (S.legal.find((a) => a.action === h.action) || { text: String(h.action) }).text;
  out.append(el("p", { id: "hint-line" }, el("strong", { text: `${h.agent}: ` }), label + (h.reason ? ` — ${h.reason}` : "")));
  const vals = Object.entries(h.values);
  if (vals.length) {
    const t = el("table", { class: "grid", id: "hint-values" }, el("tr", {}, el("th", { text: "choice" }), el("th", { text: "value" })));
    if (h.unit) t.prepend(el("caption", { id: "hint-unit", text: `value: ${h.unit}` }));
    vals.sort((a, b) => b[1] - a[1]);
    for (const [a, v] of vals) {
      const name = (S.legal.find((x) => x.action === Number(a)) || { label: a }).label;
      t.append(el("tr", {}, el("td", { text: name }), el("td", { text: v.toFixed(2) })));
    }
    out.append(t);
  }
}

function showLast() {
  const out = document.getElementById("last-out");
  out.textContent = "";
  const last = S.last_trick;
  if (!last) { out.append(el("p", { class: "muted", text: "No trick finished yet in this hand." })); return; }
  const p = el("p", { id: "last-trick" }, `Trick ${last.number}: `);
  for (const play of last.plays) p.append(`${SEAT_NAMES[play.seat]} `, cardEl(play.card, "small"), "  ");
  p.append(` — ${SEAT_NAMES[last.winner]} won it`);
  out.append(p);
}

// a cost as the review shows it: "−110 pts", "−1 trick", "0"
function costText(v, unit) {
  if (v === null || v === undefined) return "–";  // not judged in points (an early trick)
  if (!(v > 0)) return "0";
  const n = Math.round(v * 10) / 10;
  return unit === "pts" ? `−${n} pts` : `−${n} trick${n === 1 ? "" : "s"}`;
}

let pendingReviews = new Set();  // hands whose reviews are still being completed

function showReview(rv) {
  const box = document.getElementById("review");
  box.textContent = "";
  if (rv.error) { box.append(el("p", { class: "muted", text: rv.error })); return; }
  const bids = el("table", { class: "grid", id: "review-bids" }, el("tr", {}, ...["Seat", "Bid", "Tricks", "Team took", "Team DD"].map((t) => el("th", { text: t }))));
  for (const s of rv.seats) bids.append(el("tr", {}, el("td", { text: SEAT_NAMES[s.seat] }), el("td", { text: bidText(s.bid, s.blind) }), el("td", { text: s.tricks }), el("td", { text: s.team_tricks }), el("td", { text: s.team_dd })));
  box.append(el("p", { id: "review-objective", class: "muted", text: `Hand ${rv.hand}, judged by ${rv.objective.text}. Team DD: the tricks each team makes double dummy from the start of the play.` }), bids);
  if (rv.pending) box.append(el("p", { id: "review-pending", text: `The first ${rv.pending.cards} card${rv.pending.cards === 1 ? " is" : "s are"} still being judged in points, in the background; their costs in tricks are shown meanwhile, and this review updates itself when they are done.` }));
  const firsts = Object.entries(rv.first_costly).map(([seat, k]) => [Number(seat), k]).sort((x, y) => x[1] - y[1]);
  const costly = rv.cards.filter((c) => c.cost > 0).length;
  const summary = el("ul", { id: "review-firsts" });
  for (const [seat, k] of firsts) {
    const c = rv.cards[k];
    summary.append(el("li", { "data-seat": seat, text: `${SEAT_NAMES[seat]}'s first costly card: trick ${c.trick}, ${c.card}: ${costText(c.cost, "pts")}, ${costText(c.cost_tricks, "tricks")} (best: ${c.best.join(" ")})` }));
  }
  box.append(el("p", {}, (firsts.length ? `${costly} card(s) cost points` : "No card cost points double dummy") + (rv.cards.some((c) => c.cost === null) ? ` ("–": an early card not judged in points${rv.pending ? " yet" : ", its score solve past the review's search cap"})` : "") + (firsts.length ? ":" : "."), summary));
  const cards = el("table", { class: "grid", id: "review-cards" }, el("tr", {}, ...["Trick", "Seat", "Card", "Cost (points)", "Cost (tricks)", "Best"].map((t) => el("th", { text: t }))));
  const firstSet = new Set(firsts.map(([, k]) => k));
  rv.cards.forEach((c, k) => {
    cards.append(el("tr", { class: firstSet.has(k) ? "first-costly" : "", "data-card": c.card, "data-seat": c.seat }, el("td", { text: c.trick }), el("td", { text: SEAT_NAMES[c.seat] + (firstSet.has(k) ? " (first)" : "") }), el("td", { text: c.card }),
      el("td", { class: c.cost > 0 ? "cost" : "", text: costText(c.cost, "pts") }), el("td", { class: c.cost_tricks > 0 ? "cost" : "", text: costText(c.cost_tricks, "tricks") }), el("td", { text: c.best.join(" ") })));
  });
  box.append(el("details", {}, el("summary", { text: "every card's double-dummy cost, in points and in tricks" }), cards));
}

document.getElementById("hint-btn").addEventListener("click", () => {
  const agent = document.getElementById("hint-agent").value.trim();
  document.getElementById("hint-out").textContent = "thinking…";
  send(agent ? { type: "hint", agent } : { type: "hint" });
});
document.getElementById("last-btn").addEventListener("click", () => {
  const out = document.getElementById("last-out");
  out.hidden = !out.hidden;
  if (!out.hidden) showLast();
});
document.getElementById("failure-retry").addEventListener("click", () => send({ type: "seat", do: "retry" }));
document.getElementById("failure-replace").addEventListener("click", () => send({ type: "seat", do: "replace", agent: document.getElementById("failure-agent").value }));
document.getElementById("review-pick").addEventListener("change", (e) => send({ type: "review", hand: Number(e.target.value) }));
document.addEventListener("keydown", (e) => {
  if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT" || !S) return;
  // Enter or Space on a focused button, link or card is that control's own
  if ((e.key === "Enter" || e.key === " ") && e.target.closest && e.target.closest("button, a, #hand .card")) return;
  const choices = choiceList();
  if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
    if (!choices.length) return;
    if (!keyboard) { keyboard = true; selected = e.key === "ArrowRight" ? 0 : choices.length - 1; drawHand(); drawPrompt(); e.preventDefault(); return; }
    selected = (selected + (e.key === "ArrowRight" ? 1 : choices.length - 1)) % choices.length;
    drawHand(); drawPrompt(); e.preventDefault();
  } else if ((e.key === "Enter" || e.key === " ") && keyboard) {
    if (choices.length) { play(choices[Math.min(selected, choices.length - 1)]); e.preventDefault(); }
  } else if (e.key === "h") document.getElementById("hint-btn").click();
  else if (e.key === "l") document.getElementById("last-btn").click();
});
// the turn sound: off unless the person turns it on (kept for their next visit)
const soundBox = document.getElementById("sound");
try { soundBox.checked = localStorage.getItem("spades-sound") === "on"; } catch (e) { /* no storage */ }
soundBox.addEventListener("change", () => {
  try { localStorage.setItem("spades-sound", soundBox.checked ? "on" : "off"); } catch (e) { /* no storage */ }
});
loadAgents();
connect();
