// A run's page: its header (status, answer, spend), the controls that apply to its status,
// and its views as tabs: the conversation (the default), the raw events, the world, policy replay.
import { api, apiText, badge, h, money, session, show, socket } from "./lib.js";
import { conversation } from "./conversation.js";
import { eventList } from "./events.js";
import { branchLinks, forkDialog } from "./fork.js";
import { graphView } from "./graph.js";
import { policyReplay } from "./policy.js";
import { processesView } from "./processes.js";
import { branchesCard } from "./strategy.js";
import { TERMINAL } from "./transcript.js";

// What each control needs of the run's status (anything else: disabled, and why).
const APPLIES = {
  send: ["queued", "running", "waiting", "paused"],
  pause: ["queued", "running", "waiting"],
  resume: ["paused"],
  cancel: ["queued", "running", "waiting", "paused"],
};

// Tabs: one button and one panel per view; the first is shown. A view is
// { label, el, add?(event), show?(visible) }: `add` gets every event of the run (oldest
// first, live after), `show` is told when the view comes on or off screen.
function tabbed(views) {
  const bar = h("div", { class: "tabs", role: "tablist" });
  const panels = views.map((view) => h("section", { class: "panel", role: "tabpanel" }, view.el));
  const pick = (chosen) => views.forEach((view, i) => {
    const on = view === chosen;
    panels[i].hidden = !on;
    buttons[i].setAttribute("aria-selected", String(on));
    view.show && view.show(on);
  });
  const buttons = views.map((view) => h("button", { role: "tab", class: "tab",
    "data-testid": `tab-${view.label.toLowerCase()}`, onclick: () => pick(view) }, view.label));
  bar.append(...buttons);
  pick(views[0]);
  return h("div", {}, bar, ...panels);
}

export async function runView(runId) {
  let run = await api("GET", `/runs/${runId}`);
  let last = -1;
  const title = h("h1", {}, run.objective);
  const head = h("div", { class: "row" });
  const outcome = h("div", { class: "outcome", "data-testid": "outcome", hidden: true });
  const stats = h("div", { class: "stats", "data-testid": "stats" });
  const error = h("p", { class: "error", "data-testid": "run-error" });
  const fail = (failure) => { error.textContent = failure.message; };

  async function decide(requestId, decision, answer) {
    try { error.textContent = ""; await api("POST", `/runs/${runId}/approvals/${requestId}`, { decision, answer }); talk.follow(); }
    catch (failure) { fail(failure); }
  }
  async function choose(componentId, choice) {
    try {
      error.textContent = "";
      await api("POST", `/runs/${runId}/components/${encodeURIComponent(componentId)}/choose`, { choice });
      talk.follow();
    } catch (failure) { fail(failure); }
  }
  const talk = conversation(runId, { decide, choose });
  const graph = graphView({ decide });  // shown once the log says the run is a task graph
  const events = eventList((turn) => fork(turn));
  const branches = branchesCard(runId);  // a tree-of-thoughts run's branches and scores

  const act = (label, path, { cls = "secondary", ask = null } = {}) => h("button", { class: cls,
    "data-testid": `control-${path}`, onclick: async () => {
      if (ask && !confirm(ask)) return;
      try { error.textContent = ""; run = await api("POST", `/runs/${runId}/${path}`); paint(); }
      catch (failure) { fail(failure); }
    } }, label);
  const pause = act("Pause", "pause");
  const resume = act("Resume", "resume");
  const cancel = act("Cancel", "cancel", { cls: "danger",
    ask: "Cancel this run? It stops for good and cannot be resumed." });
  const message = h("input", { name: "message", placeholder: "Tell the agent something…", required: true });
  const send = h("button", { type: "submit" }, "Send");
  const steer = h("form", { class: "row steer", "data-testid": "steer" }, message, send);
  steer.addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    try { error.textContent = ""; await api("POST", `/runs/${runId}/steer`, { message: message.value }); message.value = ""; talk.follow(); }
    catch (failure) { fail(failure); }
  });

  function paint() {
    const status = run.status;
    head.replaceChildren(badge(status), h("span", { class: "muted" }, `${run.id} · ${run.model}`),
      ...(run.blueprint_version ? [h("a", { "data-testid": "run-blueprint",
        href: `#/blueprints/${encodeURIComponent(run.workspace)}/${encodeURIComponent(run.blueprint)}` },
      `blueprint ${run.blueprint} v${run.blueprint_version}`)] : []),
      ...(run.parent ? [h("a", { href: `#/runs/${run.parent.run_id}` }, "parent")] : []),
      h("a", { href: `#/runs/${run.id}/trace`, "data-testid": "trace-link" }, "Trace"), branchLinks(run));
    const ending = talk.transcript.ending;
    outcome.hidden = !(TERMINAL.has(status) && ending);
    if (!outcome.hidden) {
      outcome.className = `outcome tone-${ending.tone}`;
      outcome.replaceChildren(h("b", {}, status === "completed" ? "Answer" : status === "failed" ? "Failed" : "Cancelled"),
        h("div", { class: "text" }, ending.text));
    }
    const budget = talk.transcript.budgetUsd;
    const share = budget ? Math.min(100, (100 * run.cost_usd) / budget) : 0;
    stats.replaceChildren(
      h("div", {}, "Cost", h("b", { "data-testid": "cost" }, `${money(run.cost_usd)}${budget ? ` of ${money(budget)}` : ""}`),
        budget ? h("div", { class: "meter", "data-testid": "meter" }, h("span", { style: `width:${share}%` })) : null),
      h("div", {}, "Tokens", h("b", {}, `${run.input_tokens} in · ${run.output_tokens} out`)),
      h("div", {}, "Turns", h("b", {}, run.turns)),
      h("div", {}, "Events", h("b", {}, run.events)));
    const why = (control) => (APPLIES[control].includes(status) ? "" : `Not while the run is ${status}`);
    for (const [control, button] of [["send", send], ["pause", pause], ["resume", resume], ["cancel", cancel]]) {
      button.disabled = Boolean(why(control));
      button.title = why(control);
    }
    message.disabled = send.disabled;
  }

  // The run's world: its files at a point, a diff between two, a rollback.
  const point = h("input", { name: "point", value: "now", size: 6, "aria-label": "turn",
    "data-testid": "world-point" });
  const worldOut = h("div", { class: "stack", "data-testid": "world" });
  const at = () => encodeURIComponent(point.value.trim() || "now");
  async function files() {
    try {
      const { files: listed } = await api("GET", `/runs/${runId}/files?turn=${at()}`);
      worldOut.replaceChildren(listed.length ? h("ul", { class: "files" }, ...listed.map((f) =>
        h("li", {}, f.kind === "file" ? h("button", { class: "link", onclick: () => open(f.path) },
          f.path) : `${f.path}${f.kind === "dir" ? "/" : ""}`, h("span", { class: "muted" },
          ` ${f.size} B`)))) : h("p", { class: "muted" }, "The world is empty here."));
    } catch (failure) { error.textContent = failure.message; }
  }
  async function open(path) {
    try {
      const text = await apiText(`/runs/${runId}/files/${encodeURI(path)}?turn=${at()}`);
      worldOut.replaceChildren(h("h3", {}, path), h("pre", { "data-testid": "file" }, text));
    } catch (failure) { error.textContent = failure.message; }
  }
  async function diff() {
    try {
      const text = await apiText(`/runs/${runId}/diff?from=start&to=${at()}`);
      worldOut.replaceChildren(h("pre", { class: "diff", "data-testid": "diff" },
        text || "No change."));
    } catch (failure) { error.textContent = failure.message; }
  }
  async function rollback() {
    const to = point.value.trim() === "now" ? "start" : point.value.trim();
    if (!confirm(`Roll the world back to ${to === "start" ? "the start" : `turn ${to}`}?`)) return;
    try {
      const done = await api("POST", `/runs/${runId}/rollback`, { to: /^\d+$/.test(to) ? Number(to) : to });
      worldOut.replaceChildren(h("p", { "data-testid": "rolled-back" },
        `Rolled back to turn ${done.to_turn}: ${done.restored.length} restored, ` +
        `${done.removed.length} removed, ${done.cannot_undo.length} could not be undone.`));
    } catch (failure) { error.textContent = failure.message; }
  }
  const world = h("div", { class: "stack" },
    h("div", { class: "row" }, h("label", {}, "At ", point),
      h("button", { class: "secondary", onclick: files }, "Files"),
      h("button", { class: "secondary", onclick: diff }, "Diff from start"),
      h("button", { class: "danger", onclick: rollback }, "Roll back")),
    worldOut);

  const fork = (turn) => forkDialog(run, turn);  // turn and message chosen in a dialog

  let refresh = null;
  function add(event) {
    if (event.seq === undefined) {  // a piece of a reply as it streams, an ack, an error answer
      if (String(event.type).startsWith("reply.")) talk.piece(event);
      return;
    }
    if (event.seq <= last) return;
    last = event.seq;
    graph.add(event);
    for (const view of views) view.add && view.add(event);
    branches.add(event);
    clearTimeout(refresh);
    refresh = setTimeout(async () => { run = await api("GET", `/runs/${runId}`); paint(); }, 100);
    paint();
  }

  // The run's views, one line each; the first is the default. Another view is one more
  // line here: { label, el, add(event)?, show(visible)? } (see tabbed above).
  const views = [
    { label: "Conversation", el: talk.el, add: talk.add, show: talk.show },
    { label: "Events", el: h("div", { class: "card" }, events.el), add: events.add },
    { label: "World", el: h("div", { class: "card" }, world) },
    processesView(runId, { h, api }),
    { label: "Policy", el: policyReplay(runId, { h, api }) },
  ];
  if (TERMINAL.has(run.status)) talk.stopFollowing(); // a finished run opens at its answer
  show(h("section", { class: "card stack" }, title, head, outcome, stats, error,
    steer, h("div", { class: "row controls" }, pause, resume, cancel)),
  branches.el, graph.el, tabbed(views), talk.bar);
  paint();

  let stopped = false;
  let ws = null;
  const connect = async () => {
    ws = await socket(`/runs/${runId}/stream`, { after: String(last), replies: "true" }, add, (closed) => {
      if (!stopped && closed.code !== 4401 && closed.code !== 4404) setTimeout(connect, 1000);
    });
  };
  await connect();
  session.closeLive = () => { stopped = true; ws && ws.close(); talk.close(); };
}
