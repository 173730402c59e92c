// The lobby: set up a table (rules, who sits where) and list the runs to replay.
// Every choice is a drop-down with its meaning; the server checks everything again.
"use strict";
let OPTIONS = null;
const MAX_NAME = 40;  // characters of a person's name (the server checks it too)

function preset() { return OPTIONS.rules.presets[document.getElementById("preset").value]; }
function agentInfo(name) { return OPTIONS.catalogue.find((a) => a.name === name); }
function agentText(a) { return `${a.name} — ${a.help}`; }
function capital(text) { return text ? text[0].toUpperCase() + text.slice(1) : text; }

// the rules: one control per option a person may change, with its meaning and values
function ruleOptions() {
  const box = document.getElementById("rule-options");
  box.textContent = "";
  const defaults = preset().defaults;
  for (const [name, o] of Object.entries(OPTIONS.rules.options)) {
    const id = `opt-${name}`, value = defaults[name];
    let control;
    if (o.kind === "choice") {
      control = el("select", { id, "data-option": name, "aria-describedby": `${id}-help` });
      for (const [v, meaning] of Object.entries(o.values)) {
        control.append(el("option", { value: v, text: `${v} — ${meaning}`, selected: String(value) === v }));
      }
    } else {
      control = el("input", { id, type: "number", "data-option": name, min: o.min, max: o.max, step: 1,
        value: value === null ? "" : value, placeholder: o.kind === "optional_int" ? "none" : "", "aria-describedby": `${id}-help` });
    }
    control.addEventListener("change", changedCount);
    const range = o.kind === "choice" ? "" : ` (${o.min} to ${o.max}${o.kind === "optional_int" ? ", or empty for none" : ""})`;
    box.append(el("div", { class: "field option" }, el("label", { for: id, text: name.replaceAll("_", " ") }), control,
      el("p", { class: "help", id: `${id}-help`, text: o.meaning + range })));
  }
  changedCount();
}

// NAME=VALUE of every option that differs from the preset's
function changedOptions() {
  const defaults = preset().defaults;
  const out = [];
  for (const c of document.querySelectorAll("#rule-options [data-option]")) {
    const name = c.dataset.option, was = defaults[name];
    const now = c.value.trim();
    const same = now === "" ? was === null : String(was) === now;
    if (!same) out.push(`${name}=${now === "" ? "none" : now}`);
  }
  return out;
}

function changedCount() {
  const n = changedOptions().length;
  document.getElementById("changed").textContent = n ? `(${n} changed from the preset)` : "(as the preset has them)";
}

// who each seat is to the person: you, your partner, an opponent
function roleOf(seat, me) {
  const d = preset().defaults;
  if (seat === me) return "you";
  if (me >= 0 && d.partnerships && d.num_players === 4 && seat === (me + 2) % 4) return "your partner";
  return me >= 0 ? "opponent" : "";
}

function seatRows() {
  document.getElementById("preset-line").textContent = preset().line;
  const n = preset().defaults.num_players;
  const box = document.getElementById("seats");
  const old = [...box.querySelectorAll(".seat-row")].map((row) => ({
    who: row.querySelector("select.who").value, name: row.querySelector("input.person").value,
    options: row.querySelector("input.agent-options").value,
  }));
  box.textContent = "";
  const mine = n > 2 ? 2 : 0;
  for (let s = 0; s < n; s++) {
    const prev = old[s] || { who: s === mine ? "me" : "agent:heuristic", name: "", options: "" };
    const who = el("select", { class: "who", id: `seat-${s}-who`, "data-seat": s, "aria-describedby": `seat-${s}-help` });
    who.append(el("option", { value: "me", text: "you", selected: prev.who === "me" }),
      el("option", { value: "human", text: "another person", selected: prev.who === "human" }));
    const group = el("optgroup", { label: "agents" });
    for (const a of OPTIONS.catalogue) group.append(el("option", { value: `agent:${a.name}`, text: agentText(a), selected: prev.who === `agent:${a.name}` }));
    who.append(group);
    const person = el("input", { type: "text", class: "person", id: `seat-${s}-name`, value: prev.name, placeholder: "their name", autocomplete: "off" });
    const opts = el("input", { type: "text", class: "agent-options", id: `seat-${s}-options`, value: prev.options, autocomplete: "off" });
    const help = el("p", { class: "help", id: `seat-${s}-help` });
    const legend = el("legend", {}, el("span", { class: "seat-name", text: SEAT_NAMES[s] }), " ", el("span", { class: "role" }));
    const row = el("fieldset", { class: "seat-row", "data-seat": s }, legend,
      el("label", { for: who.id, class: "sr-only", text: `Who sits ${SEAT_NAMES[s]}` }), who,
      el("span", { class: "person-box" }, el("label", { for: person.id, text: "Name" }), person),
      el("span", { class: "options-box" }, el("label", { for: opts.id, text: "Options" }), opts), help);
    who.addEventListener("change", () => {
      if (who.value === "me") for (const other of box.querySelectorAll("select.who")) {
        if (other !== who && other.value === "me") { other.value = "agent:heuristic"; other.dispatchEvent(new Event("change")); }
      }
      syncSeats();
    });
    box.append(row);
  }
  syncSeats();
}

// the roles, and each seat's fields and line, after any change of who sits where
function syncSeats() {
  const rows = [...document.querySelectorAll("#seats .seat-row")];
  const me = rows.findIndex((r) => r.querySelector("select.who").value === "me");
  for (const [s, row] of rows.entries()) {
    const who = row.querySelector("select.who").value;
    const role = roleOf(s, me);
    row.querySelector(".role").textContent = role ? `— ${role}` : "";
    row.querySelector(".person-box").hidden = who !== "human";
    const a = who.startsWith("agent:") ? agentInfo(who.slice(6)) : null;
    const optionNames = a ? Object.keys(a.options) : [];
    row.querySelector(".options-box").hidden = !a || !optionNames.length;
    row.querySelector("input.agent-options").placeholder = optionNames.length ? `e.g. ${optionNames[0]}=…` : "";
    const help = row.querySelector(".help");
    if (who === "me") help.textContent = "You sit here.";
    else if (who === "human") help.textContent = "Another person: they get a link to this seat.";
    else if (a) help.textContent = `${capital(a.help)}. ${a.strength ? capital(a.strength) + "." : "No leaderboard row."}`
      + (optionNames.length ? ` Options (NAME=VALUE, comma-separated): ${optionNames.join(", ")}.` : "");
  }
}

async function start(event) {
  event.preventDefault();
  const err = document.getElementById("error");
  err.textContent = "";
  const rows = [...document.querySelectorAll("#seats .seat-row")];
  const myName = document.getElementById("name").value.trim() || "you";
  const seats = rows.map((row, s) => {
    const who = row.querySelector("select.who").value;
    if (who === "me") return { kind: "human", name: myName, me: true };
    if (who === "human") return { kind: "human", name: row.querySelector("input.person").value.trim() || `player ${s + 1}` };
    const extra = row.querySelector("input.agent-options").value.trim();
    return { kind: "agent", name: who.slice(6) + (extra ? `:${extra}` : "") };
  });
  const mine = seats.findIndex((s) => s.me);
  if (mine < 0) { err.textContent = "Choose your own seat: set one seat to “you”."; return; }
  const long = seats.find((s) => s.kind === "human" && [...s.name].length > MAX_NAME);
  if (long) {
    const who = long.me ? "Your name" : `The name at ${SEAT_NAMES[seats.indexOf(long)]}`;
    err.textContent = `${who} is too long: at most ${MAX_NAME} characters (it has ${[...long.name].length}).`;
    return;
  }
  const body = {
    rules: document.getElementById("preset").value,
    options: changedOptions(),
    seats: seats.map(({ kind, name }) => ({ kind, name })),
    hint: document.getElementById("hint").value,
  };
  let r, data;
  try {
    r = await fetch("/api/tables", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    data = await r.json();
  } catch (e) { err.textContent = `The server did not answer (${e.message}).`; return; }
  if (!r.ok) { err.textContent = data.error; return; }
  const own = data.links.find((l) => l.seat === mine);
  if (data.links.length === 1) { location.href = own.link; return; }
  const list = document.getElementById("link-list");
  list.textContent = "";
  for (const l of data.links) {
    const url = new URL(l.link, location.href).href;
    const role = roleOf(l.seat, mine);
    list.append(el("li", {}, el("span", { class: "link-who", text: `${SEAT_NAMES[l.seat]} (${l.name}${role && role !== "you" ? `, ${role}` : ""}): ` }),
      el("a", { href: l.link, class: l.seat === mine ? "my-seat" : "other-seat", text: l.seat === mine ? "open my seat" : url })));
  }
  document.getElementById("links").hidden = false;
}

async function runs() {
  const list = document.getElementById("runs");
  try {
    const data = await getJSON("/api/runs");
    list.textContent = "";
    if (!data.runs.length) list.append(el("li", { class: "help", text: "no run folders yet" }));
    for (const run of data.runs) {
      list.append(el("li", {}, el("a", { href: `/replay?run=${encodeURIComponent(run.path)}`, text: run.path }), ` — ${run.kind}`));
    }
  } catch (e) { list.textContent = e.message; }
}

async function main() {
  OPTIONS = await getJSON("/api/options");
  const pick = document.getElementById("preset");
  for (const p of OPTIONS.presets) pick.append(el("option", { value: p, text: `${p} — ${OPTIONS.rules.presets[p].line}` }));
  pick.addEventListener("change", () => { ruleOptions(); seatRows(); });
  const hint = document.getElementById("hint");
  for (const a of OPTIONS.catalogue) hint.append(el("option", { value: a.name, text: agentText(a), selected: a.name === "heuristic" }));
  document.getElementById("writes").textContent = "The game is saved on the server as it is played: its record (every deal, bid and card, to resume and replay it)"
    + (OPTIONS.datasets ? ", and each person's decisions as a training dataset (its bc-seatN folders; the server's --no-datasets keeps none)." : "; this server keeps no dataset of the people's decisions.");
  ruleOptions();
  seatRows();
  document.getElementById("setup").addEventListener("submit", start);
  window.spadesLobbyReady = true;  // the tests wait for it
  runs();
}
main();
