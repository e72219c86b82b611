// A task graph on its run's page: the plan's tasks as nodes in columns by dependency level,
// the edges between them, each task's state live from the graph's events. A tap on a node
// shows its report or error, a link to its run and, for a report awaiting a person, Approve
// and Deny (the run's approval route). On a phone the graph is a list, level by level.
// The fold is SessionState.tasks' (kernel/session/_replay.py): graph.planned, task.*, and
// the approvals named "task" (call_id task:ID:RUN).
import { h, money } from "./lib.js";

const SVG = "http://www.w3.org/2000/svg";
const NODE_W = 176, NODE_H = 64, GAP_X = 56, GAP_Y = 16;
const NARROW = window.matchMedia("(max-width: 600px)");
const LABEL = { pending: "pending", running: "running", completed: "completed", failed: "failed",
  awaiting: "awaiting approval" };

export class GraphFold {
  constructor() { this.plan = null; this.tasks = new Map(); this.approvals = new Map(); this.requests = new Map(); }

  // Fold one event; the task it changed ("*": the plan), else null.
  add(event) {
    const d = event.data || {};
    const task = event.type.startsWith("task.") ? this.task(String(d.task)) : null;
    switch (event.type) {
      case "graph.planned":
        this.plan = d.plan;
        for (const spec of d.plan.tasks || []) this.task(spec.id);
        return "*";
      case "task.started":
        Object.assign(task, { status: "running", runId: d.run_id, attempts: d.attempt,
          budgetUsd: d.budget_usd ?? null, error: null, objective: d.objective });
        task.runs.push(d.run_id);
        return d.task;
      case "task.completed":
        Object.assign(task, { status: "completed", report: d.report, budgetUsd: null });
        task.costUsd += d.cost_usd || 0;
        return d.task;
      case "task.failed":
        Object.assign(task, { status: d.retrying ? "pending" : "failed", error: d.error, budgetUsd: null });
        task.costUsd += d.cost_usd || 0;
        return d.task;
      case "task.retried":
        Object.assign(task, { status: "pending", attempts: 0 });
        return d.task;
      case "approval.requested":
        if (d.name !== "task" || !d.call_id) return null;
        this.approvals.set(d.call_id, { requestId: d.request_id, decision: null, by: null });
        this.requests.set(d.request_id, d.call_id);
        return d.args && d.args.task ? String(d.args.task) : null;
      case "approval.decided": {
        const call = this.requests.get(d.request_id);
        if (!call) return null;
        Object.assign(this.approvals.get(call), { decision: d.decision, by: d.by });
        return call.split(":")[1];
      }
      default: return null;
    }
  }

  task(id) {
    if (!this.tasks.has(id)) {
      this.tasks.set(id, { id, status: "pending", attempts: 0, runId: null, runs: [], objective: null,
        report: null, error: null, costUsd: 0, budgetUsd: null });
    }
    return this.tasks.get(id);
  }

  spec(id) { return (this.plan.tasks || []).find((t) => t.id === id) || { id, objective: "" }; }

  // The approval of the task's latest attempt, if one was asked.
  approval(id) { const t = this.task(id); return t.runId ? this.approvals.get(`task:${id}:${t.runId}`) : undefined; }

  // What a node shows: the task's status, or "awaiting" while a person's decision is due.
  state(id) {
    const t = this.task(id);
    const asked = this.approval(id);
    return t.status === "completed" && asked && !asked.decision ? "awaiting" : t.status;
  }

  // Passed: completed and, where the task asks, approved (its dependents may start).
  passed(id) {
    const asked = this.approval(id);
    return this.task(id).status === "completed" && (!this.spec(id).approve || (asked && asked.decision === "allow"));
  }
}

// Every task a task waits for: depends_on and its inputs' tasks (TaskSpec.needs).
export const needsOf = (spec) => [...new Set([...(spec.depends_on || []),
  ...Object.values(spec.inputs || {}).map((source) => String(source).split(".")[0])])];

// Level of each task: 0 without needs, else one past its deepest need; rows within a level.
export function layout(tasks) {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const level = new Map();
  const depth = (id) => {
    if (!level.has(id)) {
      level.set(id, 0); // a plan is a DAG (checked by the server): this only guards a loop
      level.set(id, Math.max(-1, ...needsOf(byId.get(id) || {}).filter((n) => byId.has(n)).map(depth)) + 1);
    }
    return level.get(id);
  };
  const levels = [];
  for (const t of tasks) (levels[depth(t.id)] ||= []).push(t.id);
  return { level, levels: levels.map((ids) => ids || []) };
}

export function graphView({ decide }) {
  const fold = new GraphFold();
  const nodes = new Map(); // task id → its element
  const edges = new Map(); // task id → [from, path] of the edges at either end
  let selected = null;
  const canvas = h("div", { class: "graph-canvas", "data-testid": "graph-canvas" });
  const detail = h("div", { class: "task-detail", "data-testid": "task-detail", hidden: true });
  const tally = h("span", { class: "muted", "data-testid": "graph-tally" });
  const el = h("section", { class: "card graph", "data-testid": "graph", hidden: true },
    h("h2", {}, "Tasks ", tally), canvas, detail);

  function paintTally() {
    const count = {};
    for (const id of nodes.keys()) count[fold.state(id)] = (count[fold.state(id)] || 0) + 1;
    tally.textContent = `${count.completed || 0} of ${nodes.size} completed` +
      ["running", "awaiting", "failed"].filter((s) => count[s]).map((s) => ` · ${count[s]} ${LABEL[s]}`).join("");
  }

  function nodeOf(id) {
    return h("button", { class: "graph-node", "data-testid": "graph-node", "data-task": id,
      onclick: () => select(id) });
  }

  function select(id) {
    const before = selected;
    selected = id;
    paintNode(before); paintNode(id); paintDetail();
  }

  function build() {
    const specs = fold.plan.tasks || [];
    const { levels } = layout(specs);
    nodes.clear(); edges.clear();
    for (const spec of specs) nodes.set(spec.id, nodeOf(spec.id));
    const narrow = NARROW.matches;
    canvas.classList.toggle("as-list", narrow);
    if (narrow) {
      canvas.replaceChildren(...levels.map((ids, i) => h("div", { class: "graph-level", "data-testid": "graph-level" },
        h("h3", { class: "muted" }, i ? `Level ${i + 1}: after ${[...new Set(ids.flatMap((id) =>
          needsOf(fold.spec(id))))].join(", ")}` : "Level 1: first"), ids.map((id) => nodes.get(id)))));
    } else {
      const at = new Map();
      levels.forEach((ids, col) => ids.forEach((id, row) => at.set(id, [col * (NODE_W + GAP_X), row * (NODE_H + GAP_Y)])));
      const width = levels.length * (NODE_W + GAP_X) - GAP_X;
      const height = Math.max(...levels.map((ids) => ids.length)) * (NODE_H + GAP_Y) - GAP_Y;
      const lines = document.createElementNS(SVG, "svg");
      for (const [key, value] of Object.entries({ class: "graph-edges", width, height, "aria-hidden": "true" })) lines.setAttribute(key, value);
      for (const spec of specs) {
        for (const need of needsOf(spec).filter((n) => at.has(n))) {
          const [x1, y1] = at.get(need), [x2, y2] = at.get(spec.id);
          const path = document.createElementNS(SVG, "path");
          const [ax, ay, bx, by] = [x1 + NODE_W, y1 + NODE_H / 2, x2, y2 + NODE_H / 2];
          path.setAttribute("d", `M${ax},${ay} C${ax + GAP_X / 2},${ay} ${bx - GAP_X / 2},${by} ${bx},${by}`);
          path.setAttribute("data-testid", "graph-edge");
          path.setAttribute("data-from", need); path.setAttribute("data-to", spec.id);
          lines.append(path);
          for (const end of [need, spec.id]) (edges.get(end) || edges.set(end, []).get(end)).push([need, path]);
        }
      }
      for (const [id, [x, y]] of at) nodes.get(id).style.cssText = `left:${x}px;top:${y}px;width:${NODE_W}px;height:${NODE_H}px`;
      const plane = h("div", { class: "graph-plane" }, lines, ...nodes.values());
      plane.style.cssText = `width:${width}px;height:${height}px`;
      canvas.replaceChildren(plane);
    }
    for (const id of nodes.keys()) paintNode(id);
    paintTally();
  }

  function paintNode(id) {
    const node = nodes.get(id);
    if (!node) return;
    const t = fold.task(id), state = fold.state(id);
    node.className = `graph-node state-${state}${selected === id ? " selected" : ""}`;
    node.dataset.state = state;
    node.replaceChildren(h("b", {}, id), h("span", { class: `chip state-${state}` }, LABEL[state]),
      h("span", { class: "muted" }, [t.attempts > 1 ? `attempt ${t.attempts}` : null, t.costUsd ? money(t.costUsd) : null]
        .filter(Boolean).join(" · ")));
    for (const [from, path] of edges.get(id) || []) {
      path.setAttribute("class", fold.passed(from) ? "passed" : fold.state(from) === "awaiting" ? "gate" : "");
    }
  }

  function paintDetail() {
    const id = selected;
    detail.hidden = id == null;
    if (id == null) return;
    const t = fold.task(id), spec = fold.spec(id), asked = fold.approval(id), state = fold.state(id);
    const report = t.report == null ? null : typeof t.report === "string" ? t.report : JSON.stringify(t.report, null, 2);
    detail.replaceChildren(...[
      h("div", { class: "row" }, h("b", {}, id), h("span", { class: `chip state-${state}` }, LABEL[state]),
        h("span", { class: "muted" }, `${t.attempts} attempt${t.attempts === 1 ? "" : "s"} · ${money(t.costUsd)}` +
          (t.budgetUsd != null ? ` · ${money(t.budgetUsd)} set aside` : ""))),
      h("p", {}, spec.objective || ""),
      t.runId ? h("a", { href: `#/runs/${t.runId}`, "data-testid": "task-run" }, `Open its run ${t.runId}`) : null,
      report != null && t.status === "completed" ? h("pre", { class: "command", "data-testid": "task-report" }, report) : null,
      t.error ? h("p", { class: "error", "data-testid": "task-error" }, t.error) : null,
      state === "awaiting" ? h("div", { class: "ask", "data-testid": "task-approval" },
        h("h3", {}, `Approve ${id}'s report? Its dependents start once it is approved.`),
        h("div", { class: "row" },
          h("button", { class: "allow", onclick: () => decide(asked.requestId, "allow") }, "Approve"),
          h("button", { class: "deny", onclick: () => decide(asked.requestId, "deny") }, "Deny")))
        : asked && asked.decision ? h("p", { class: "muted" }, `${asked.decision === "allow" ? "Approved" : "Denied"} by ${asked.by}`) : null,
    ].filter(Boolean));
  }

  NARROW.addEventListener("change", () => fold.plan && build());

  return {
    el,
    add(event) {
      const changed = fold.add(event);
      if (!changed || !fold.plan) return;
      if (changed === "*") { el.hidden = false; build(); return; }
      paintNode(changed);
      paintTally();
      if (selected === null && fold.state(changed) === "awaiting") select(changed); // what needs a person
      else if (selected === changed) paintDetail();
    },
  };
}
