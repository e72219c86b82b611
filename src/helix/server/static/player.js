// A finished run turn by turn: what happened in a turn, the world as of its end.
import { api, apiText, h, show } from "./lib.js";

function line(event) {
  const d = event.data || {};
  switch (event.type) {
    case "model.responded": return [d.text, ...(d.tool_calls || []).map((c) => `→ ${c.name}(${JSON.stringify(c.args)})`)]
      .filter(Boolean).join("\n");
    case "tool.completed": return `${d.name || "tool"}: ${d.ok ? "ok" : "failed"}${d.output ? `\n${d.output}` : ""}`;
    case "file.changed": return `${d.op} ${d.path}`;
    case "steer.received": return `message: ${d.message}`;
    case "approval.decided": return `${d.decision} by ${d.by}`;
    case "run.completed": return `completed: ${d.summary || ""}`;
    case "run.failed": return `failed: ${d.error}`;
    default: return null;
  }
}

export async function playerView(runId, start) {
  const run = await api("GET", `/runs/${runId}`);
  const events = [];
  for (let after = -1; ;) {
    const page = await api("GET", `/runs/${runId}/events?after=${after}&limit=1000`);
    events.push(...page.events);
    if (!page.events.length || page.next_after === after) break;
    after = page.next_after;
  }
  const last = Math.max(run.turns, 1);
  let turn = Math.min(Math.max(Number(start) || 1, 1), last);
  const label = h("b", { "data-testid": "player-turn" });
  const happened = h("ol", { class: "timeline", "data-testid": "player-events" });
  const files = h("ul", { class: "files", "data-testid": "player-files" });
  const diff = h("pre", { class: "diff", "data-testid": "player-diff" });
  const error = h("p", { class: "error" });
  const prev = h("button", { class: "secondary", onclick: () => go(turn - 1) }, "Previous turn");
  const next = h("button", { class: "secondary", onclick: () => go(turn + 1) }, "Next turn");

  async function go(to) {
    turn = Math.min(Math.max(to, 1), last);
    history.replaceState(null, "", `#/play/${runId}/${turn}`);
    label.textContent = `Turn ${turn} of ${run.turns}`;
    prev.disabled = turn <= 1;
    next.disabled = turn >= last;
    happened.replaceChildren(...events.filter((e) => e.turn === turn).map((e) => [e, line(e)])
      .filter(([, text]) => text).map(([e, text]) => h("li", { "data-type": e.type },
        h("span", { class: "seq" }, `#${e.seq}`), h("div", {}, h("span", { class: "type" }, e.type), h("pre", {}, text)))));
    try {
      const [{ files: listed }, text] = await Promise.all([api("GET", `/runs/${runId}/files?turn=${turn}`),
        apiText(`/runs/${runId}/diff?from=${turn === 1 ? "start" : turn - 1}&to=${turn}`)]);
      files.replaceChildren(...listed.map((f) => h("li", {}, `${f.path}${f.kind === "dir" ? "/" : ""}`,
        h("span", { class: "muted" }, ` ${f.size} B`))));
      if (!listed.length) files.append(h("li", { class: "muted" }, "The world is empty here."));
      diff.textContent = text || "No file changed in this turn.";
      error.textContent = "";
    } catch (failure) { error.textContent = failure.message; }
  }

  show(h("section", { class: "card stack" }, h("h1", {}, run.objective),
    h("p", {}, h("a", { href: `#/runs/${runId}` }, `back to ${runId}`)),
    h("div", { class: "row" }, prev, label, next), error),
  h("section", { class: "card" }, h("h2", {}, "What happened"), happened),
  h("section", { class: "card" }, h("h2", {}, "Files at the end of the turn"), files),
  h("section", { class: "card" }, h("h2", {}, "Changed in this turn"), diff));
  await go(turn);
}
