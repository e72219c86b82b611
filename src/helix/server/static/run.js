// A run's page: its header and controls, its timeline live, its world, policy replay.
import { api, apiText, badge, h, money, session, show, socket } from "./lib.js";
import { branchLinks, forkDialog } from "./fork.js";
import { policyReplay } from "./policy.js";

function describe(event) {
  const d = event.data || {};
  switch (event.type) {
    case "run.created": return [`Objective: ${d.objective}`, `Model: ${d.model}`];
    case "model.responded": return [d.text || "", ...(d.tool_calls || []).map(
      (c) => `→ ${c.name}(${JSON.stringify(c.args)})`), `${money(d.cost_usd)} · ${Math.round(d.latency_ms)} ms`];
    case "tool.requested": return [`${d.name} ${JSON.stringify(d.args)}`];
    case "gate.decided": return [`${d.gate}: ${d.verdict} — ${d.reason || ""}`];
    case "tool.completed": return [`${d.ok ? "ok" : "failed"} · ${Math.round(d.duration_ms)} ms`, d.output || ""];
    case "approval.requested": return [`${d.name} ${JSON.stringify(d.args)}`];
    case "approval.decided": return [`${d.decision} by ${d.by}${d.auto ? " (auto)" : ""}`];
    case "file.changed": return [`${d.op} ${d.path}`];
    case "steer.received": return [d.message];
    case "run.completed": return [d.summary || ""];
    case "run.failed": return [d.error];
    case "run.paused": return [`reason: ${d.reason}`];
    case "budget.exceeded": return [`spent ${money(d.spent_usd)} of ${money(d.cap_usd)}`];
    case "agent.spawned": return [`child run ${d.child_run_id}: ${d.objective}`];
    case "agent.reported": return [`${d.child_run_id} ${d.status || "completed"} · ${money(d.cost_usd)}`, d.report];
    case "egress.counted": return [(d.hosts || []).map((x) => `${x.host}: ${x.verdict} (${x.attempts} tries)`).join(", ")
      + (d.other_attempts ? ` · ${d.other_attempts} more to other hosts` : "")];
    case "world.rolled_back": return [`to turn ${d.to_turn} by ${d.by}`,
      ...(d.conflicts || []).map((c) => `conflict: ${c.path}: ${c.detail}`)];
    case "world.kept": return [`${d.branch} into ${d.target}`,
      ...(d.conflicts || []).map((c) => `conflict: ${c.path}: ${c.detail}`)];
    default: return [];
  }
}

export async function runView(runId) {
  let run = await api("GET", `/runs/${runId}`);
  let budget = null;
  let last = -1;
  const approvals = new Map();
  const title = h("h1", {}, run.objective);
  const head = h("div", { class: "row" });
  const stats = h("div", { class: "stats", "data-testid": "stats" });
  const error = h("p", { class: "error", "data-testid": "run-error" });
  const timeline = h("ol", { class: "timeline", "data-testid": "timeline" });
  const asks = h("div", { "data-testid": "approvals" });
  const act = (label, path, cls = "secondary") => h("button", { class: cls, onclick: async () => {
    try { error.textContent = ""; run = await api("POST", `/runs/${runId}/${path}`); paint(); }
    catch (failure) { error.textContent = failure.message; }
  } }, label);
  const steer = h("form", { class: "row", "data-testid": "steer" },
    h("input", { name: "message", placeholder: "Tell the agent something…", required: true }),
    h("button", { type: "submit" }, "Send"));
  steer.addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    const input = steer.elements.message;
    try { await api("POST", `/runs/${runId}/steer`, { message: input.value }); input.value = ""; }
    catch (failure) { error.textContent = failure.message; }
  });

  function paint() {
    head.replaceChildren(badge(run.status), h("span", { class: "muted" }, `${run.id} · ${run.model}`),
      ...(run.parent ? [h("a", { href: `#/runs/${run.parent.run_id}` }, "parent")] : []), branchLinks(run));
    const share = budget ? Math.min(100, (100 * run.cost_usd) / budget) : 0;
    stats.replaceChildren(
      h("div", {}, "Cost", h("b", { "data-testid": "cost" }, `${money(run.cost_usd)}${budget ? ` of ${money(budget)}` : ""}`),
        budget ? h("div", { class: "meter" }, h("span", { style: `width:${share}%` })) : null),
      h("div", {}, "Tokens", h("b", {}, `${run.input_tokens} in · ${run.output_tokens} out`)),
      h("div", {}, "Turns", h("b", {}, run.turns)),
      h("div", {}, "Events", h("b", {}, run.events)));
    asks.replaceChildren(...[...approvals.values()].map((a) => h("div", { class: "card approval" },
      h("h2", {}, `Approve ${a.name}?`), h("pre", {}, JSON.stringify(a.args, null, 2)),
      h("div", { class: "row" },
        h("button", { class: "allow", onclick: () => decide(a.request_id, "allow") }, "Allow"),
        h("button", { class: "deny", onclick: () => decide(a.request_id, "deny") }, "Deny")))));
  }

  async function decide(requestId, decision) {
    try { await api("POST", `/runs/${runId}/approvals/${requestId}`, { decision }); }
    catch (failure) { error.textContent = failure.message; }
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
  const world = h("section", { class: "card stack" }, h("h2", {}, "World"),
    h("div", { class: "row" }, h("label", {}, "At ", point),
      h("button", { class: "secondary", onclick: files }, "Files"),
      h("button", { class: "secondary", onclick: diff }, "Diff from start"),
      h("button", { class: "danger", onclick: rollback }, "Roll back")),
    worldOut);

  const fork = (turn) => forkDialog(run, turn);  // turn and message chosen in a dialog

  let refresh = null;
  function add(event) {
    if (event.seq === undefined) return;  // an ack or an error answer
    if (event.seq <= last) return;
    last = event.seq;
    const d = event.data || {};
    if (event.type === "run.created" && d.budget) budget = d.budget.usd;
    if (event.type === "approval.requested") approvals.set(d.request_id, d);
    if (event.type === "approval.decided") approvals.delete(d.request_id);
    const lines = describe(event).filter((line) => line !== "");
    const verdict = event.type === "gate.decided" ? `verdict-${d.verdict}` : "";
    timeline.append(h("li", { "data-type": event.type },
      h("span", { class: "seq" }, `#${event.seq}`),
      h("div", {}, h("span", { class: `type ${verdict}` }, event.type),
        event.turn ? h("span", { class: "muted" }, ` · turn ${event.turn}`) : null,
        lines.length ? h("pre", {}, lines.join("\n")) : null,
        event.type === "turn.ended" ? h("button", { class: "link", "data-testid": "fork",
          onclick: () => fork(d.turn) }, `Fork from turn ${d.turn}`) : null)));
    clearTimeout(refresh);
    refresh = setTimeout(async () => { run = await api("GET", `/runs/${runId}`); paint(); }, 100);
    paint();
  }

  show(h("section", { class: "card" }, title, head, stats, error),
    asks,
    h("section", { class: "card stack" }, h("h2", {}, "Controls"), steer,
      h("div", { class: "row" }, act("Pause", "pause"), act("Resume", "resume"), act("Cancel", "cancel", "danger"))),
    world,
    policyReplay(runId, { h, api }),
    h("section", { class: "card" }, h("h2", {}, "Timeline"), timeline));
  paint();

  let stopped = false;
  let ws = null;
  const connect = async () => {
    ws = await socket(`/runs/${runId}/stream`, { after: String(last) }, add, (closed) => {
      if (!stopped && closed.code !== 4401 && closed.code !== 4404) setTimeout(connect, 1000);
    });
  };
  await connect();
  session.closeLive = () => { stopped = true; ws && ws.close(); };
}
