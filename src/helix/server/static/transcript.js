// A run's events folded into what a person reads: messages, tool calls, run notes.
// Pure data (no DOM), the same fold as the terminal's transcript (helix run, helix replay):
// - said: the agent's message (in full), a person's steer;
// - call: one tool call, from its request through every gate, its approval, its run,
//   its result and the files it changed;
// - note: something that happened to the run (created, paused, failed, restarted, …).
// A tool source's question waits on its call (`question`), then is listed in `asked`.

const STATUS_AFTER = {
  "run.created": "queued", "run.forked": "queued", "run.started": "running",
  "run.resumed": "running", "run.paused": "paused", "run.completed": "completed",
  "run.failed": "failed", "run.cancelled": "cancelled", "approval.requested": "waiting",
  "approval.decided": "running", "ui.asked": "waiting", "ui.chosen": "running",
};
const RANK = { allow: 0, ask: 1, deny: 2 };
const EXIT = /\[exit code (-?\d+)\]\s*$/;
const SIGNAL = /\[killed by signal (\d+)\]\s*$/;
const usd = (n) => `$${Number(n || 0).toFixed(4)}`;
// Which budget a budget.exceeded names (the run's own, workspace:W's month…) and which cap.
function budgetWords(d) {
  const amount = d.cap_tokens != null ? `${d.spent_tokens || 0} of ${d.cap_tokens} tokens`
    : `${usd(d.spent_usd)} spent of ${d.cap_usd == null ? "-" : usd(d.cap_usd)}`;
  if (d.scope == null) return amount;
  return `${d.scope === "run" ? "the run's own cap" : `${d.scope}'s ${d.period} budget`}: ${amount}`;
}

// What a model.rejected says: what went wrong, that the model was told, and the count.
const WENT_WRONG = {
  malformed_arguments: "the model's reply was malformed",
  unknown_tool: "the model called a tool the run does not have",
  invalid_arguments: "the model's arguments do not fit the tool",
  empty_reply: "the model's reply was empty",
  no_tool_call: "the model did not make the tool call it was asked for",
};
export function rejectedWords(d) {
  const count = d.limit ? `${d.mistakes} of ${d.limit}` : `${d.mistakes} in a row`;
  return `${WENT_WRONG[d.reason] || "the model's reply went wrong"}: ${d.detail} (told the model; ${count})`;
}

// How each run-level event reads; types not here make no block.
const NOTES = {
  "run.resumed": (d) => ["resumed", d.by ? `resumed by ${d.by}` : "resumed after a restart", "info"],
  "run.paused": (d) => ["paused", d.detail ? `paused (${d.reason}: ${d.detail})` : `paused (${d.reason})`, "warn"],
  "run.completed": (d) => ["completed", String(d.summary || ""), "good"],
  "run.failed": (d) => ["failed", String(d.error), "bad"],
  "run.cancelled": (d) => ["cancelled", `cancelled by ${d.by}`, "bad"],
  "budget.exceeded": (d) => ["budget", `budget reached: ${budgetWords(d)}`, "warn"],
  "lease.taken_over": (d) => ["takeover", `another process took the run over (${d.reason === "expired"
    ? "its driver stopped renewing" : "its driver's process ended"}): ${d.holder}`, "warn"],
  "supervisor.restarted": (d) => ["restart",
    `${d.component} restarted (attempt ${d.attempt}): ${d.reason}`, "warn"],
  "world.rolled_back": (d) => ["rollback", `the world rolled back to turn ${d.to_turn} by ${d.by}` +
    ` (${(d.restored || []).length} restored, ${(d.removed || []).length} removed)` +
    ((d.conflicts || []).length ? `; left as they were: ${d.conflicts.map((c) => `${c.path}: ${c.detail}`).join("; ")}` : ""),
  (d.conflicts || []).length ? "warn" : "info"],
  "world.kept": (d) => ["kept", `the world of ${d.branch} kept into ${d.target} by ${d.by}` +
    ((d.conflicts || []).length ? `; ${d.conflicts.length} left as they were` : ""),
  (d.conflicts || []).length ? "warn" : "good"],
  "strategy.branched": (d) => ["branched", `branched ${d.branches.length} ways at turn ${d.turn}: ` +
    `${d.branches.map((b) => b.run_id).join(", ")} (judged by ${d.judge})`, "info"],
  "strategy.scored": (d) => ["scored", `branch ${d.branch} ${d.status}: ` +
    (d.score == null ? "no score" : `score ${d.score}`), d.score ? "good" : "warn"],
  "strategy.chosen": (d) => ["chosen", d.branch ? `kept branch ${d.branch}: ${d.reason}`
    : `no branch kept: ${d.reason}`, d.branch ? "good" : "bad"],
  "world.file_skipped": (d) => ["skipped", `${d.path} left out of snapshots: ${d.reason} (${d.size} bytes)`, "warn"],
  "effect.recorded": (d) => ["effect", `${d.tool} ${d.kind}: ${d.summary}`, d.kind === "irreversible" ? "warn" : "info"],
  "effect.settled": (d) => ["effect", `${d.call_id} ${d.outcome}: ${d.detail}`, d.outcome === "failed" ? "bad" : "info"],
  "plugin.loaded": (d) => ["plugin", `plugin ${d.name} ${d.version} loaded`, "info"],
  "plugin.reloaded": (d) => ["plugin",
    `plugin ${d.name} ${d.previous} → ${d.version} (${d.reason}), serving from the next turn`, "info"],
  "plugin.failed": (d) => ["plugin", `plugin ${d.name}: ${d.error}` +
    (d.serving ? ` (${d.serving} keeps serving)` : ""), d.serving ? "warn" : "bad"],
  "mcp.sampled": (d) => ["sampled", `${d.source} had ${d.model} answer a prompt ` +
    `(${d.usage.input_tokens}+${d.usage.output_tokens} tokens, ${d.cost_usd == null ? "price unknown" : usd(d.cost_usd)}): ${d.text}`, "info"],
  "mcp.sample_refused": (d) => ["sampling", `${d.source}: sampling refused: ${d.reason}`, "warn"],
  "agent.reported": (d) => ["reported", `${d.child_run_id} ${d.status || "completed"} · ${usd(d.cost_usd)}` +
    (d.report ? `: ${d.report}` : ""), d.status && d.status !== "completed" ? "warn" : "info"],
  "mcp.server.started": (d) => ["mcp", `MCP server ${d.server} (${d.transport}${d.tier ? ` in ${d.tier}` : ""}` +
    `${d.restarts ? `, restart ${d.restarts}` : ""}): ${(d.tools || []).join(", ") || "no tools"}`, "info"],
  "mcp.server.stopped": (d) => ["mcp", `MCP server ${d.server} stopped`, "info"],
  "mcp.server.failed": (d) => ["mcp", `MCP server ${d.server} failed: ${d.reason}` +
    (d.gave_up ? " (no more restarts)" : ""), d.gave_up ? "bad" : "warn"],
  "mcp.tools.changed": (d) => ["mcp", `MCP server ${d.server} tools changed: ` +
    ([...(d.added || []).map((n) => `+${n}`), ...(d.removed || []).map((n) => `-${n}`)].join(" ") || "same names"), "info"],
  "mcp.egress.decided": (d) => ["mcp", `MCP server ${d.server} ${d.verdict} ${d.host}:${d.port}: ${d.reason}`,
    d.verdict === "allow" ? "info" : "warn"],
};

// A source's question and how it was answered, on one line (the message as text).
function answered(question, d) {
  const asked = question.name === "sampling" ? `${question.source} asked to have the run's model answer a prompt`
    : `${question.source} asked “${String(question.message).split(/\s+/).join(" ")}”`;
  if (d.decision === "allow") {
    const fields = Object.entries(d.answer || {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ");
    return `${asked}: answered by ${d.by}${fields ? `: ${fields}` : ""}`;
  }
  return d.auto && d.reason ? `${asked}: ${d.reason}` : `${asked}: declined by ${d.by}`;
}

export const TERMINAL = new Set(["completed", "failed", "cancelled"]);

// A command's exit code from its output's footer (negative: killed by a signal), else null.
export function exitCodeOf(output) {
  const found = EXIT.exec(output);
  if (found) return Number(found[1]);
  const killed = SIGNAL.exec(output);
  return killed ? -Number(killed[1]) : null;
}

// `path=a.txt content='hello…'` on one line, cut at `width` characters.
export function summarizeArgs(args, width = 100) {
  const entries = Object.entries(args || {});
  const parts = entries.map(([key, value]) => {
    let text = (typeof value === "string" ? value : JSON.stringify(value)).split(/\s+/).join(" ").trim();
    if (text.length > 60 && entries.length > 1) text = `${text.slice(0, 59)}…`;
    return entries.length === 1 ? text : `${key}=${text}`;
  });
  const line = parts.join(" ");
  return line.length <= width ? line : `${line.slice(0, width - 1)}…`;
}

// A malformed call's text as the model sent it, on one line.
function oneLine(text, width = 100) {
  const line = text.split(/\s+/).join(" ").trim();
  return line.length <= width ? line : `${line.slice(0, width - 1)}…`;
}

export class Transcript {
  constructor() {
    this.blocks = [];
    this.status = "queued";
    this.head = -1;
    this.budgetUsd = null;
    this.endedTurns = new Set();
    this.thinking = false;
    this.ending = null; // the note of how the run ended or stopped
    this.calls = new Map();
    this.requests = new Map();
    this.components = new Map(); // component id → its block
  }

  // Fold one event; the block it created or updated (null: it changes no block).
  add(event) {
    if (event.seq <= this.head) return null;
    this.head = event.seq;
    this.status = STATUS_AFTER[event.type] || this.status;
    const d = event.data || {};
    const type = event.type;
    if (type === "turn.ended") { this.endedTurns.add(Number(d.turn)); return null; }
    if (/^(tool|gate|approval|file|egress)\./.test(type)) return this.callEvent(type, event.turn, d);
    if (type.startsWith("model.")) return this.modelEvent(type, event.turn, d);
    if (type.startsWith("ui.")) return this.uiEvent(type, event.turn, d);
    if (type === "steer.received") return this.append({ kind: "said", who: "person", turn: event.turn, text: String(d.message), by: d.by });
    if (type === "agent.spawned") {
      const call = this.calls.get(d.call_id);
      if (call) call.childRunId = d.child_run_id;
      return this.append({ kind: "note", type, tone: "info", turn: event.turn,
        text: `delegated to ${d.child_run_id}: ${d.objective}`, runId: d.child_run_id });
    }
    if (type === "run.created") {
      this.budgetUsd = d.budget ? d.budget.usd : null;
      return this.append({ kind: "note", type, tone: "info", turn: null, text: String(d.objective), label: "objective" });
    }
    if (type === "run.forked") {
      return this.append({ kind: "note", type, tone: "info", turn: null, runId: d.parent.run_id,
        text: `forked from ${d.parent.run_id} at turn ${d.turn}${d.message ? `: ${d.message}` : ""}` });
    }
    const fold = NOTES[type];
    if (!fold) return null;
    const [label, text, tone] = fold(d);
    const note = { kind: "note", type, label, text, tone, turn: event.turn };
    if (["run.completed", "run.failed", "run.cancelled", "run.paused"].includes(type)) this.ending = note;
    else if (type === "run.resumed" || type === "run.started") this.ending = null;
    return this.append(note);
  }

  // The options cards waiting on a person's choice.
  waitingCards() { return [...this.components.values()].filter((block) => block.waiting); }

  // A component shown (ui.component), an options card's wait (ui.asked) and its choice (ui.chosen).
  uiEvent(type, turn, d) {
    if (type === "ui.component") {
      const block = { kind: "component", id: d.id, component: String(d.component), props: d.props || {},
        callId: d.call_id, turn, waiting: false, expiresAt: null, choice: null, chosenBy: null, closed: null };
      if (d.id) this.components.set(d.id, block);
      return this.append(block);
    }
    const found = this.components.get(d.component_id);
    if (!found) return null;
    if (type === "ui.asked") { found.waiting = true; found.expiresAt = d.expires_at; }
    if (type === "ui.chosen") {
      found.waiting = false;
      found.choice = d.choice;
      found.chosenBy = d.by;
      found.closed = d.choice == null ? String(d.reason || "closed") : null;
    }
    return found;
  }

  // The calls waiting on a person's decision.
  pending() { return [...this.calls.values()].filter((call) => call.state === "waiting"); }

  append(block) { block.index = this.blocks.length; this.blocks.push(block); return block; }

  modelEvent(type, turn, d) {
    if (type === "model.requested") { this.thinking = true; return null; }
    this.thinking = false;
    if (type === "model.failed") {
      const again = d.retry_in_s != null ? `; again in ${d.retry_in_s}s` : "";
      return this.append({ kind: "note", type, label: "model", tone: "warn", turn,
        text: `the model call failed (attempt ${d.attempt}): ${d.error}${again}` });
    }
    if (type === "model.rejected") {
      return this.append({ kind: "note", type, label: "rejected", tone: "warn", turn, text: rejectedWords(d) });
    }
    const text = String(d.text || "");
    return text.trim() ? this.append({ kind: "said", who: "agent", turn, text }) : null;
  }

  callEvent(type, turn, d) {
    if (type === "tool.requested") {
      const call = { kind: "call", callId: d.call_id, turn, name: d.name, args: d.args || {},
        summary: d.raw_args != null ? oneLine(String(d.raw_args)) : summarizeArgs(d.args), verdict: null, gates: [], reasons: [], requestId: null,
        decision: null, decidedBy: null, auto: false, state: "requested", output: "",
        exitCode: null, files: [], sandbox: null, node: null, durationMs: null, egress: "", childRunId: null,
        question: null, asked: [] };
      this.calls.set(call.callId, call);
      return this.append(call);
    }
    if (type === "approval.decided") {
      const found = this.requests.get(d.request_id);
      if (found && found.question) { // a source's question: the call goes on
        found.asked.push(answered(found.question, d));
        found.question = null; found.state = "running";
      } else if (found) {
        found.decision = d.decision; found.decidedBy = d.by; found.auto = Boolean(d.auto);
        found.state = d.decision === "deny" ? "denied" : "running";
      }
      return found || null;
    }
    const call = this.calls.get(d.call_id);
    if (!call) return null; // its request is before the events folded (a fork's)
    if (type === "gate.decided") {
      call.gates.push({ gate: d.gate, verdict: d.verdict, reason: d.reason || "" });
      if (call.verdict === null || RANK[d.verdict] > RANK[call.verdict]) call.verdict = d.verdict;
      if (d.verdict !== "allow") call.reasons.push(`${d.gate}: ${d.reason}`);
      if (d.verdict === "deny") call.state = "denied";
    } else if (type === "approval.requested") {
      call.requestId = d.request_id; call.state = "waiting"; this.requests.set(d.request_id, call);
      call.question = d.question ? { ...d.question, name: d.name, args: d.args || {} } : null;
    } else if (type === "tool.started") {
      call.state = "running"; call.sandbox = d.sandbox || null;
    } else if (type === "tool.completed") {
      call.output = String(d.output || ""); call.durationMs = Number(d.duration_ms || 0);
      call.node = d.node || null;
      call.exitCode = exitCodeOf(call.output);
      const refused = call.verdict === "deny" || call.decision === "deny";
      call.state = refused ? "denied" : d.ok ? "ok" : "error";
    } else if (type === "tool.interrupted") {
      call.state = "interrupted"; call.output = String(d.reason || "");
    } else if (type === "file.changed") {
      call.files.push({ path: d.path, op: d.op });
    } else if (type === "egress.counted") {
      const others = Number(d.other_attempts || 0);
      call.egress = (d.hosts || []).map((x) => `${x.host} ${x.verdict} (${x.attempts} tries)`).join(", ") +
        (others ? `; ${others} more elsewhere` : "");
    }
    return call;
  }
}
