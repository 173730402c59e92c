// The lobby: set up a table (rules, who sits where) and list the runs to replay.
"use strict";
let OPTIONS = null;

function seatRows() {
  const preset = document.getElementById("preset").value;
  document.getElementById("preset-options").textContent = Object.entries(OPTIONS.defaults[preset])
    .filter(([k]) => k !== "name").map(([k, v]) => `${k}=${v === null ? "none" : v}`).join(", ");
  const n = OPTIONS.defaults[preset].num_players;
  const body = document.querySelector("#seats tbody");
  const old = [...body.querySelectorAll("tr")].map((tr) => ({
    kind: tr.querySelector("select").value, name: tr.querySelector("input").value,
  }));
  body.textContent = "";
  const me = n > 2 ? 2 : 0;
  for (let s = 0; s < n; s++) {
    const prev = old[s] || { kind: s === me ? "me" : "agent", name: "heuristic" };
    const kind = el("select", { "aria-label": `who sits ${SEAT_NAMES[s]}`, "data-seat": s });
    for (const [v, t] of [["me", "me"], ["human", "another person"], ["agent", "agent"]]) {
      kind.append(el("option", { value: v, text: t, selected: prev.kind === v }));
    }
    const name = el("input", { type: "text", value: prev.kind === "me" ? "" : prev.name, list: "agent-list", "aria-label": `${SEAT_NAMES[s]} agent or name` });
    const sync = () => { name.disabled = kind.value === "me"; name.placeholder = kind.value === "human" ? "their name" : kind.value === "agent" ? "heuristic" : ""; };
    kind.addEventListener("change", () => {
      if (kind.value === "me") for (const other of body.querySelectorAll("select")) if (other !== kind && other.value === "me") { other.value = "agent"; other.dispatchEvent(new Event("change")); }
      if (kind.value === "human" && name.value === "heuristic") name.value = "";
      if (kind.value === "agent" && !name.value) name.value = "heuristic";
      sync();
    });
    sync();
    body.append(el("tr", {}, el("td", { text: SEAT_NAMES[s] }), el("td", {}, kind), el("td", {}, name)));
  }
}

async function start(event) {
  event.preventDefault();
  const err = document.getElementById("error");
  err.textContent = "";
  const seats = [...document.querySelectorAll("#seats tbody tr")].map((tr) => {
    const kind = tr.querySelector("select").value;
    const name = tr.querySelector("input").value.trim();
    if (kind === "me") return { kind: "human", name: document.getElementById("name").value.trim() || "you", me: true };
    return { kind, name: kind === "agent" ? name || "heuristic" : name };
  });
  const mine = seats.findIndex((s) => s.me);
  if (mine < 0) { err.textContent = "choose your seat: set one seat to 'me'"; return; }
  const body = {
    rules: document.getElementById("preset").value,
    options: document.getElementById("options").value,
    seats: seats.map(({ kind, name }) => ({ kind, name })),
    hint: document.getElementById("hint").value.trim() || "heuristic",
  };
  const r = await fetch("/api/tables", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const data = await r.json();
  if (!r.ok) { err.textContent = data.error; return; }
  const own = data.links.find((l) => l.seat === mine);
  if (data.links.length === 1) { location.href = own.link; return; }
  const list = document.getElementById("link-list");
  list.textContent = "";
  for (const l of data.links) {
    const url = new URL(l.link, location.href).href;
    list.append(el("li", {}, `${SEAT_NAMES[l.seat]} (${l.name}): `, el("a", { href: l.link, class: l.seat === mine ? "my-seat" : "other-seat", text: l.seat === mine ? "open my seat" : url })));
  }
  document.getElementById("links").hidden = false;
}

async function runs() {
  const list = document.getElementById("runs");
  try {
    const data = await getJSON("/api/runs");
    list.textContent = "";
    if (!data.runs.length) list.append(el("li", { class: "muted", text: "no run folders yet" }));
    for (const run of data.runs) {
      list.append(el("li", {}, el("a", { href: `/replay?run=${encodeURIComponent(run.path)}`, text: run.path }), ` — ${run.kind}`));
    }
  } catch (e) { list.textContent = e.message; }
}

async function main() {
  OPTIONS = await getJSON("/api/options");
  const preset = document.getElementById("preset");
  for (const p of OPTIONS.presets) preset.append(el("option", { value: p, text: p }));
  preset.addEventListener("change", seatRows);
  const dl = document.getElementById("agent-list");
  for (const a of OPTIONS.agents) dl.append(el("option", { value: a }));
  document.getElementById("agent-names").textContent = OPTIONS.agents.join(", ");
  seatRows();
  document.getElementById("setup").addEventListener("submit", start);
  runs();
}
main();
