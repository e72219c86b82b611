// The raw event log of a run, one row per event, oldest first (for debugging a run).
import { budgetWords, h, money } from "./lib.js";
import { rejectedWords } from "./transcript.js";

function describe(event) {
  const d = event.data || {};
  switch (event.type) {
    case "run.created": return [`Objective: ${d.objective}`, `Model: ${d.model}`];
    case "model.requested": return [`${d.role || "main"} · ${d.provider}:${d.model}`];
    case "model.responded": return [d.text || "", ...(d.tool_calls || []).map(
      (c) => `→ ${c.name}(${c.raw_args != null ? c.raw_args : JSON.stringify(c.args)})`),
      `${d.role || "main"}${d.provider ? ` · ${d.provider}:${d.model}` : ""} · ${money(d.cost_usd)} · ${Math.round(d.latency_ms)} ms`];
    case "context.compacted": return [`turns 1–${d.upto_turn} summarised by ${d.role} · ${d.provider}:${d.model}`,
      d.summary, money(d.cost_usd)];
    case "tool.requested": return d.raw_args != null
      ? [`${d.name} ${d.raw_args}`, `malformed: ${d.malformed}`] : [`${d.name} ${JSON.stringify(d.args)}`];
    case "model.rejected": return [rejectedWords(d)];
    case "gate.decided": return [`${d.gate}: ${d.verdict} — ${d.reason || ""}`];
    case "tool.completed": return [`${d.ok ? "ok" : "failed"} · ${Math.round(d.duration_ms)} ms`, d.output || ""];
    case "approval.requested": return d.question ? [`${d.question.source} asks:`, d.question.message]
      : [`${d.name} ${JSON.stringify(d.args)}`];
    case "approval.decided": return [`${d.decision} by ${d.by}${d.auto ? " (auto)" : ""}`,
      ...(d.answer ? [JSON.stringify(d.answer)] : [])];
    case "mcp.sampled": return [`${d.source}: ${d.model} answered`, d.text, money(d.cost_usd)];
    case "mcp.sample_refused": return [`${d.source}: ${d.reason}`];
    case "file.changed": return [`${d.op} ${d.path}`];
    case "steer.received": return [d.message];
    case "run.completed": return [d.summary || ""];
    case "run.failed": return [d.error];
    case "run.paused": return [`reason: ${d.reason}`, d.detail || ""];
    case "run.cancelled": return [`by ${d.by}`];
    case "run.resumed": return [d.by ? `by ${d.by}` : "after a restart"];
    case "model.failed": return [`attempt ${d.attempt}: ${d.error}` + (d.retry_in_s != null ? `; again in ${d.retry_in_s}s` : "")];
    case "supervisor.restarted": return [`${d.component} restarted (attempt ${d.attempt}): ${d.reason}`];
    case "lease.taken_over": return [`driven now by ${d.holder} (epoch ${d.epoch}): ${d.previous_holder} ${d.reason === "expired" ? "stopped renewing" : "ended"}`];
    case "tool.interrupted": return [d.reason || ""];
    case "budget.exceeded": return [d.scope == null ? `spent ${money(d.spent_usd)} of ${money(d.cap_usd)}` : budgetWords(d)];
    case "agent.spawned": return [`child run ${d.child_run_id}: ${d.objective}`];
    case "agent.reported": return [`${d.child_run_id} ${d.status || "completed"} · ${money(d.cost_usd)}`, d.report];
    case "egress.counted": return [(d.hosts || []).map((x) => `${x.host}: ${x.verdict} (${x.attempts} tries)`).join(", ")
      + (d.other_attempts ? ` · ${d.other_attempts} more to other hosts` : "")];
    case "plugin.loaded": return [`${d.name} ${d.version} (${d.source})`];
    case "plugin.reloaded": return [`${d.name} ${d.previous} → ${d.version}: ${d.reason}`];
    case "plugin.failed": return [`${d.name}: ${d.error}` + (d.serving ? ` (${d.serving} keeps serving)` : "")];
    case "world.rolled_back": return [`to turn ${d.to_turn} by ${d.by}`,
      ...(d.conflicts || []).map((c) => `conflict: ${c.path}: ${c.detail}`)];
    case "world.kept": return [`${d.branch} into ${d.target}`,
      ...(d.conflicts || []).map((c) => `conflict: ${c.path}: ${c.detail}`)];
    case "strategy.branched": return [`${d.branches.length} branches at turn ${d.turn}, judged by ${d.judge}`,
      ...d.branches.map((b) => b.run_id)];
    case "strategy.scored": return [`${d.branch} ${d.status}: ${d.score == null ? "no score" : `score ${d.score}`}`, d.detail || ""];
    case "strategy.chosen": return [d.branch ? `kept ${d.branch}: ${d.reason}` : `none kept: ${d.reason}`];
    case "mcp.server.started": return [`${d.server} (${d.transport}${d.tier ? ` in ${d.tier}` : ""}): ${(d.tools || []).join(", ") || "no tools"}`];
    case "mcp.server.stopped": return [d.server];
    case "mcp.server.failed": return [`${d.server}: ${d.reason}${d.gave_up ? " (no more restarts)" : ""}`];
    case "mcp.tools.changed": return [`${d.server}: ${[...(d.added || []).map((n) => `+${n}`), ...(d.removed || []).map((n) => `-${n}`)].join(" ")}`];
    case "mcp.egress.decided": return [`${d.server} ${d.verdict} ${d.host}:${d.port}: ${d.reason}`];
    default: return [];
  }
}

// The section and what adds an event to it; `fork(turn)` is offered at each turn's end.
export function eventList(fork) {
  const el = h("ol", { class: "timeline", "data-testid": "timeline" });
  function add(event) {
    const d = event.data || {};
    const lines = describe(event).filter((line) => line !== "");
    const verdict = event.type === "gate.decided" ? `verdict-${d.verdict}` : "";
    el.append(h("li", { "data-type": event.type },
      h("span", { class: "seq" }, `#${event.seq}`),
      h("div", {}, h("span", { class: `type ${verdict}` }, event.type),
        event.turn ? h("span", { class: "muted" }, ` · turn ${event.turn}`) : null,
        lines.length ? h("pre", {}, lines.join("\n")) : null,
        event.type === "turn.ended" ? h("button", { class: "link", "data-testid": "fork",
          onclick: () => fork(d.turn) }, `Fork from turn ${d.turn}`) : null)));
  }
  return { el, add };
}
