// A run as a conversation: the agent's messages, each tool call as one card (its gates
// folded in, its approval, its output as a terminal block, its file changes as diffs),
// and what happened to the run. Blocks come from the pure fold in transcript.js.
// Follow mode keeps the newest block in view; scrolling up pauses it, "Jump to latest"
// (or scrolling back to the bottom) resumes it.
import { componentView } from "./components.js";
import { apiText, h } from "./lib.js";
import { questionForm } from "./question.js";
import { Transcript } from "./transcript.js";

const TAIL_LINES = 30;
const STATE_LABEL = { requested: "checking", waiting: "waiting for you", running: "running",
  ok: "done", error: "failed", denied: "denied", interrupted: "interrupted" };

// What a person approves: a command in full, else the arguments as JSON.
const shownArgs = (call) => (typeof call.args.command === "string" && Object.keys(call.args).length === 1
  ? call.args.command : JSON.stringify(call.args, null, 2));

function terminal(output) {
  const lines = output.replace(/\n$/, "").split("\n");
  const box = h("pre", { class: "terminal", "data-testid": "terminal" });
  const tail = () => {
    const more = lines.length > TAIL_LINES ? [h("button", { class: "link more",
      onclick: () => box.replaceChildren(lines.join("\n")) }, `… ${lines.length - TAIL_LINES} earlier lines (show all)`)] : [];
    box.replaceChildren(...more, lines.slice(-TAIL_LINES).join("\n"));
  };
  tail();
  return box;
}

// A unified diff, each line coloured by what it does (text only, never markup).
export function diffView(text) {
  if (!text) return h("pre", { class: "diff" }, "No change.");
  return h("pre", { class: "diff" }, text.replace(/\n$/, "").split("\n").map((line) => h("span", {
    class: line.startsWith("+") && !line.startsWith("+++") ? "add"
      : line.startsWith("-") && !line.startsWith("---") ? "del" : line.startsWith("@@") ? "hunk" : "" },
  `${line}\n`)));
}

export function conversation(runId, { decide, choose }) {
  const transcript = new Transcript();
  const list = h("div", { class: "conversation", "data-testid": "conversation" });
  const thinking = h("p", { class: "muted thinking", hidden: true }, "The agent is thinking…");
  const jump = h("button", { class: "jump", hidden: true, "data-testid": "jump-latest",
    onclick: () => { following = true; jump.hidden = true; latest(); } }, "↓ Jump to latest");
  const bar = h("div", { class: "action-bar", hidden: true, "data-testid": "approvals" });
  // The reply being streamed (WS `replies=true`): its text as it arrives, the calls it
  // starts; replaced by the reply's block when its model.responded comes.
  const typingText = h("div", { class: "text" });
  const typingWho = h("div", { class: "who" });
  const typingCalls = h("p", { class: "muted" });
  const typing = h("div", { class: "block said agent typing", "data-testid": "agent-typing", hidden: true },
    typingWho, typingText, typingCalls);
  let typingTurn = null;
  let doneTurn = 0; // the newest turn whose reply the log holds: its pieces are stale
  const calls = new Map(); // a streamed call's index → its name
  const el = h("div", {}, list, typing, thinking, jump);
  const shown = new Map(); // block index → its element
  const diffs = new Map(); // "callId path" → the diff's element, fetched once
  let following = true;
  let active = true; // the conversation is the view on screen
  let lastY = window.scrollY;

  const atBottom = () => window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 48;
  function latest() {
    if (!following || !active) return;
    window.scrollTo({ top: document.documentElement.scrollHeight, behavior: "instant" });
    lastY = window.scrollY;
  }
  function onScroll() {
    if (window.scrollY < lastY - 4 && !atBottom()) { following = false; jump.hidden = !active; }
    else if (atBottom()) { following = true; jump.hidden = true; }
    lastY = window.scrollY;
  }
  window.addEventListener("scroll", onScroll, { passive: true });

  function fileDiff(call, file) {
    const key = `${call.callId} ${file.path}`;
    if (diffs.has(key)) return diffs.get(key);
    const box = h("div", { class: "file-change", "data-testid": "file-change" },
      h("div", { class: "path" }, `${file.op} ${file.path}`));
    diffs.set(key, box);
    const turn = Number(call.turn || 0);
    const from = turn > 1 ? String(turn - 1) : "start";
    const to = transcript.endedTurns.has(turn) ? String(turn) : "now";
    const query = new URLSearchParams({ from, to, path: file.path });
    apiText(`/runs/${runId}/diff?${query}`).then((text) => { box.append(diffView(text)); latest(); },
      (failure) => box.append(h("p", { class: "error" }, `diff: ${failure.message}`)));
    return box;
  }

  function approval(call, where) {
    if (call.question) return questionForm(call, where, decide);
    return h("div", { class: "ask", "data-testid": where },
      h("h3", {}, `Approve ${call.name}?`),
      h("pre", { class: "command", "data-testid": "approval-command" }, shownArgs(call)),
      h("div", { class: "row" },
        h("button", { class: "allow", onclick: () => decide(call.requestId, "allow") }, "Allow"),
        h("button", { class: "deny", onclick: () => decide(call.requestId, "deny") }, "Deny")));
  }

  function callCard(call) {
    const allowed = call.gates.length > 0 && call.gates.every((g) => g.verdict === "allow");
    const gates = allowed
      ? h("span", { class: "gates-ok", "data-testid": "gates", title: call.gates.map((g) => g.gate).join(", ") },
        `✓ ${call.gates.length} gate${call.gates.length === 1 ? "" : "s"}`)
      : call.gates.length ? h("ul", { class: "gates", "data-testid": "gates" },
        call.gates.filter((g) => g.verdict !== "allow").map((g) =>
          h("li", { class: `verdict-${g.verdict}` }, `${g.gate}: ${g.verdict}${g.reason ? ` — ${g.reason}` : ""}`)),
        h("li", { class: "muted allowed" }, `✓ allowed by ${call.gates.filter((g) => g.verdict === "allow")
          .map((g) => g.gate).join(", ") || "no gate"}`)) : null;
    const decided = call.decision ? h("p", { class: "muted decided", "data-testid": "decided" },
      `${call.decision === "allow" ? "Allowed" : "Denied"} by ${call.decidedBy}${call.auto ? " (auto)" : ""}`) : null;
    const command = typeof call.args.command === "string";
    let output = null;
    if (call.output && (command || call.state === "error" || call.state === "denied" || call.state === "interrupted")) {
      output = terminal(call.output);
    } else if (call.output) {
      output = h("details", { class: "output" }, h("summary", {}, "Output"), h("pre", {}, call.output));
    }
    return h("div", { class: `block call state-${call.state}`, "data-testid": "call", "data-state": call.state },
      h("div", { class: "call-head" },
        h("b", {}, call.name), h("span", { class: `chip state-${call.state}` }, STATE_LABEL[call.state]),
        allowed ? gates : null,
        call.durationMs != null ? h("span", { class: "muted" }, `${Math.round(call.durationMs)} ms`) : null),
      call.state === "waiting" ? null : h("div", { class: "summary" }, command ? `$ ${call.args.command}` : call.summary),
      allowed ? null : gates,
      call.state === "waiting" ? approval(call, "approval") : decided,
      call.childRunId ? h("a", { href: `#/runs/${call.childRunId}` }, `child run ${call.childRunId}`) : null,
      call.asked.map((line) => h("p", { class: "muted asked", "data-testid": "asked" }, line)),
      call.egress ? h("p", { class: "muted" }, `network: ${call.egress}`) : null,
      call.node ? h("p", { class: "muted" }, `ran on node ${String(call.node).slice(0, 12)}`) : null,
      output,
      call.state === "ok" || call.state === "error" ? call.files.map((f) => fileDiff(call, f)) : null);
  }

  function render(block) {
    if (block.kind === "call") return callCard(block);
    if (block.kind === "component") return componentView(block, { choose });
    if (block.kind === "said") {
      return h("div", { class: `block said ${block.who}`, "data-testid": block.who === "agent" ? "agent-said" : "person-said" },
        h("div", { class: "who" }, block.who === "agent" ? `Agent${block.turn ? ` · turn ${block.turn}` : ""}` : `You${block.by ? ` (${block.by})` : ""}`),
        h("div", { class: "text" }, block.text));
    }
    return h("div", { class: `block note tone-${block.tone}`, "data-type": block.type, "data-testid": "note" },
      block.label ? h("b", {}, `${block.label}: `) : null, block.text,
      block.runId ? h("a", { href: `#/runs/${block.runId}` }, ` ${block.runId}`) : null);
  }

  // The phone's action bar: the first approval waiting, else the first options card.
  function paintBar() {
    const [first, ...more] = transcript.pending();
    const [card, ...cards] = transcript.waitingCards();
    const waiting = more.length + cards.length + (first && card ? 1 : 0);
    bar.hidden = !first && !card;
    document.body.classList.toggle("has-action-bar", !bar.hidden);
    if (bar.hidden) return bar.replaceChildren();
    const shown = first ? approval(first, "bar-approval")
      : h("div", { class: "ask", "data-testid": "bar-choice" }, componentView(card, { choose }));
    bar.replaceChildren(shown, ...(waiting ? [h("p", { class: "muted" }, `${waiting} more waiting`)] : []));
  }

  function stopTyping() {
    typing.hidden = true;
    typingTurn = null;
    typingText.textContent = "";
    typingCalls.textContent = "";
    calls.clear();
  }

  // One piece of a reply as it streams (reply.text, reply.tool_call, reply.restart).
  function piece(message) {
    if (message.turn <= doneTurn) return; // its reply is in the log already
    if (message.type === "reply.restart") { if (message.turn === typingTurn) stopTyping(); return; }
    if (message.turn !== typingTurn) { stopTyping(); typingTurn = message.turn; }
    if (message.type === "reply.text") typingText.append(message.text || "");
    else if (message.name) calls.set(message.index, message.name);
    typingWho.textContent = `Agent · turn ${message.turn} · writing…`;
    typingCalls.textContent = calls.size ? `calling ${[...calls.values()].join(", ")}…` : "";
    typing.hidden = false;
    thinking.hidden = true;
    latest();
  }

  // Fold one event; true when it changed what the conversation shows.
  function add(event) {
    const block = transcript.add(event);
    if (event.type === "model.responded") doneTurn = Math.max(doneTurn, Number(event.turn || 0));
    if (event.type === "model.responded" || event.type.startsWith("run.")) stopTyping();
    thinking.hidden = !transcript.thinking || !typing.hidden;
    paintBar();
    if (!block) return false;
    const fresh = render(block);
    const old = shown.get(block.index);
    if (old) old.replaceWith(fresh); else list.append(fresh);
    shown.set(block.index, fresh);
    latest();
    return true;
  }

  return {
    el, bar, transcript, add, piece,
    // The run page says when the conversation is the view on screen (follow mode applies).
    show(visible) { active = visible; jump.hidden = !visible || following; latest(); },
    stopFollowing() { following = false; jump.hidden = !active; },
    // After the person acts (Send, Allow, Deny), what follows is what they want to see.
    follow() { following = true; jump.hidden = true; latest(); },
    close() { window.removeEventListener("scroll", onScroll); document.body.classList.remove("has-action-bar"); },
  };
}
