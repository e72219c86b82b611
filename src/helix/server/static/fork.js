// Forking a run: from which turn, with what message (and, if wanted, another model).
import { api, h } from "./lib.js";

export function forkDialog(run, turn) {
  const turns = Array.from({ length: run.turns + 1 }, (_, n) => n);
  const error = h("p", { class: "error" });
  const form = h("form", { class: "stack", method: "dialog" },
    h("h2", {}, `Fork ${run.id}`),
    h("label", { class: "stack" }, "From the end of turn",
      h("select", { name: "turn", "aria-label": "Fork from turn" },
        turns.map((n) => h("option", { value: n, selected: n === turn }, n === 0 ? "0 (the start)" : String(n))))),
    h("textarea", { name: "message", placeholder: "A message for the fork (optional)",
      "aria-label": "Message for the fork" }),
    h("input", { name: "model", placeholder: `Model (default: ${run.model})`, "aria-label": "Model for the fork" }),
    h("div", { class: "row" },
      h("button", { type: "submit", value: "fork" }, "Fork"),
      h("button", { type: "button", class: "secondary", onclick: () => dialog.close() }, "Cancel")),
    error);
  const dialog = h("dialog", { class: "card fork-dialog", "data-testid": "fork-dialog" }, form);
  form.addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    const data = new FormData(form);
    const body = { turn: Number(data.get("turn")) };
    if (data.get("message").trim()) body.message = data.get("message");
    if (data.get("model").trim()) body.model = data.get("model").trim();
    try {
      const made = await api("POST", `/runs/${run.id}/fork`, body);
      dialog.close();
      forksOf.delete(run.id);  // its page lists the new fork next time
      location.hash = `#/runs/${made.id}`;
    } catch (failure) { error.textContent = failure.message; }
  });
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}

// Links from a run's page to its branches' comparisons and its step player.
const forksOf = new Map();  // run id → its forks' ids (asked once per run page)

export function branchLinks(run) {
  const links = h("span", { class: "row branch-links" },
    run.parent ? h("a", { href: `#/compare/${run.parent.run_id}/${run.id}`, "data-testid": "compare-link" },
      "compare branches") : null,
    h("a", { href: `#/play/${run.id}`, "data-testid": "player-link" }, "step through"));
  if (!forksOf.has(run.id)) {
    forksOf.set(run.id, api("GET", `/runs?limit=1000&workspace=${encodeURIComponent(run.workspace)}`)
      .then((page) => page.runs.filter((r) => r.parent && r.parent.run_id === run.id).map((r) => r.id))
      .catch(() => []));
  }
  forksOf.get(run.id).then((forks) => links.append(...forks.map((id) =>
    h("a", { href: `#/compare/${run.id}/${id}`, "data-testid": "compare-fork" }, `compare with ${id}`))));
  return links;
}
