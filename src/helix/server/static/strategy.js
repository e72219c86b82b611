// A tree-of-thoughts run's branches, from its strategy.* events: each branch (a link to
// its page), how it ended, its score, and the one kept. Hidden for every other run.
import { h } from "./lib.js";

export function branchesCard(runId) {
  const branches = new Map();  // run id → { status, score, scored }
  let judge = "";
  let turn = 0;
  let decision = null;  // { branch, reason } once strategy.chosen is in
  const about = h("p", { class: "muted", "data-testid": "branches-about" });
  const list = h("ol", { class: "branches", "data-testid": "branches-list" });
  const chosen = h("p", { "data-testid": "branches-chosen", hidden: true });
  const el = h("section", { class: "card", "data-testid": "branches", hidden: true },
    h("div", { class: "stack" }, h("h2", {}, "Branches"), about, list, chosen));

  function paint() {
    el.hidden = branches.size === 0;
    about.textContent = `Tree of thoughts: ${branches.size} branches from turn ${turn}, judged by ${judge}.`;
    list.replaceChildren(...[...branches].map(([id, b]) => {
      const kept = decision && decision.branch === id;
      const score = b.score == null ? (b.scored ? "no score" : "not scored yet") : `score ${b.score}`;
      return h("li", { class: `branch${kept ? " kept" : ""}`, "data-testid": "branch",
        "data-run": id, "data-kept": kept ? "true" : "false" },
        h("a", { href: `#/runs/${id}` }, id),
        h("span", { class: `status ${b.status}` }, b.status),
        h("b", { "data-testid": "branch-score" }, score),
        kept ? h("span", { class: "kept-mark", "data-testid": "branch-kept" }, "kept") : null);
    }));
    chosen.hidden = !decision;
    if (decision) {
      chosen.textContent = decision.branch ? `Kept ${decision.branch}: ${decision.reason}.`
        : `No branch kept: ${decision.reason}.`;
    }
  }

  function add(event) {
    if (event.run_id !== runId) return;  // a fork's inherited events are its parent's
    const d = event.data || {};
    if (event.type === "strategy.branched") {
      judge = d.judge;
      turn = d.turn;
      for (const b of d.branches) branches.set(b.run_id, { status: "running", score: null, scored: false });
    } else if (event.type === "strategy.scored" && branches.has(d.branch)) {
      branches.set(d.branch, { status: d.status, score: d.score, scored: true });
    } else if (event.type === "strategy.chosen") {
      decision = { branch: d.branch, reason: d.reason };
    } else return;
    paint();
  }
  return { el, add };
}
