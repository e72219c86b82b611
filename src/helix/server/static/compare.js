// Two branches side by side (outcome, turns, cost, the files that differ); keep one.
import { api, badge, h, money, show } from "./lib.js";

async function outcome(run) {
  const { events } = await api("GET", `/runs/${run.id}/events?after=${Math.max(-1, run.events - 6)}&limit=10`);
  const end = events.filter((e) => ["run.completed", "run.failed", "run.cancelled"].includes(e.type)).pop();
  if (!end) return "Not finished.";
  return end.data.summary || end.data.error || end.data.reason || end.type;
}

export async function compareView(a, b) {
  const { runs, diff } = await api("GET", `/runs/${a}/compare/${b}`);
  const error = h("p", { class: "error", "data-testid": "compare-error" });
  const result = h("div", { "data-testid": "kept" });
  async function keep(run) {
    const target = run.parent ? run.parent.run_id : "its original";
    if (!confirm(`Keep ${run.id}: make ${target}'s folder hold this branch's files?`)) return;
    try {
      const kept = await api("POST", `/runs/${run.id}/keep`);
      result.replaceChildren(h("p", {}, `Kept ${run.id}: ${kept.original}'s folder now holds its files ` +
        `(${kept.restored.length} restored, ${kept.removed.length} removed, ${kept.conflicts.length} conflicts).`),
        ...kept.conflicts.map((c) => h("p", { class: "error" }, `${c.path}: ${c.detail}`)));
    } catch (failure) { error.textContent = failure.message; }
  }
  const columns = await Promise.all(runs.map(async (run) => h("section", { class: "card stack", "data-testid": "branch" },
    h("h2", {}, h("a", { href: `#/runs/${run.id}` }, run.id)),
    h("div", { class: "row" }, badge(run.status), h("span", { class: "muted" }, run.model)),
    h("p", { "data-testid": "outcome" }, await outcome(run)),
    h("p", { class: "muted" }, `${run.turns} turns · ${money(run.cost_usd)}`),
    run.parent ? h("button", { class: "danger", onclick: () => keep(run) }, "Keep this branch") : null)));
  show(h("section", { class: "card" }, h("h1", {}, "Compare branches"),
    h("p", { class: "muted" }, `Files: the diff from ${runs[0].id}'s last world to ${runs[1].id}'s.`), error, result),
    h("div", { class: "compare" }, ...columns),
    h("section", { class: "card" }, h("h2", {}, "Files"),
      h("pre", { class: "diff", "data-testid": "compare-diff" }, diff || "The two worlds hold the same files.")));
}
