// The runs page: a new run, and every run the caller may see, live.
import { api, badge, h, money, session, show, socket } from "./lib.js";
import { placePicker } from "./places.js";

export async function runsView() {
  const status = new URLSearchParams(location.hash.split("?")[1] || "").get("status") || "";
  const list = h("ul", { class: "runs", "data-testid": "runs" });
  const filter = h("select", { "aria-label": "Status", onchange: (e) => {
    location.hash = e.target.value ? `#/?status=${e.target.value}` : "#/";
  } }, ["", "queued", "running", "waiting", "paused", "completed", "failed", "cancelled"].map(
    (s) => h("option", { value: s, selected: s === status }, s || "all statuses")));
  const error = h("p", { class: "error" });
  const form = h("form", { class: "card stack", "data-testid": "new-run" },
    h("h2", {}, "New run"),
    h("textarea", { name: "objective", placeholder: "What should the agent do?", required: true }),
    h("div", { class: "row" },
      h("input", { name: "model", placeholder: "Model, e.g. openai:gpt-4.1", required: true }),
      h("input", { name: "budget", type: "number", min: "0", step: "0.01", placeholder: "Budget USD" })),
    h("div", { "data-testid": "places" }),
    h("label", { class: "row muted" }, h("input", { name: "auto", type: "checkbox", style: "width:auto" }),
      "Approve every tool call automatically"),
    h("button", { type: "submit" }, "Start"), error);
  form.addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    const data = new FormData(form);
    const body = { objective: data.get("objective"), model: data.get("model"),
      auto_approve: data.get("auto") === "on" };
    if (data.get("budget")) body.budget_usd = Number(data.get("budget"));
    places.apply(body);
    try {
      const run = await api("POST", "/runs", body);
      location.hash = `#/runs/${run.id}`;
    } catch (failure) { error.textContent = failure.message; }
  });
  const places = await placePicker(form);
  form.querySelector('[data-testid="places"]').replaceWith(places.fields);
  show(form, h("section", { class: "card" }, h("div", { class: "row" }, h("h2", {}, "Runs"), filter), list));

  async function load() {
    const page = await api("GET", `/runs?limit=100${status ? `&status=${status}` : ""}`);
    list.replaceChildren(...page.runs.map((run) => h("li", {},
      h("a", { href: `#/runs/${run.id}` },
        h("span", {}, run.objective.slice(0, 120)), badge(run.status),
        h("span", { class: "muted" }, `${run.id} · ${run.model}`),
        h("span", { class: "muted" }, `${money(run.cost_usd)} · ${run.turns} turns`)))));
    if (!page.runs.length) list.append(h("li", { class: "muted" }, "No runs yet."));
  }
  await load();
  let pending = null;
  let stopped = false;
  let ws = null;
  const refresh = () => { clearTimeout(pending); pending = setTimeout(load, 150); };
  // Dropped (too slow, or the server's feed of other servers' events was interrupted):
  // connect again and reload the list, which holds whatever was missed.
  const connect = async () => {
    ws = await socket("/stream", {}, (event) => {
      if (!event.seq && event.seq !== 0) return;
      refresh();
    }, (closed) => {
      if (!stopped && closed.code !== 4401) setTimeout(() => { refresh(); connect(); }, 1000);
    });
  };
  await connect();
  session.closeLive = () => { stopped = true; ws && ws.close(); };
}
