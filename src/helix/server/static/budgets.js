// Budgets: a workspace's cumulative caps (GET /workspaces/W/budgets): whose runs each
// counts (the workspace's, a blueprint's, a person's), its period (a UTC day or month),
// and a bar per cap of what was spent (and is held by calls in flight) against it.
// Owners and admins set and remove them here; everyone in the workspace reads them.
// One card per budget, so a phone reads it as a wide screen does.
import { api, h, money, show } from "./lib.js";

function workspaceOf(roles) {
  const wanted = new URLSearchParams(location.hash.split("?")[1] || "").get("workspace");
  const names = Object.keys(roles).sort();
  return names.includes(wanted) ? wanted : names[0];
}

// One cap's bar: spent, then held, against the cap; full and marked "over" at or past it.
function bar(label, spent, held, cap, format) {
  const used = spent + held;
  const part = (n) => (cap > 0 ? Math.min(1, n / cap) : 1);
  const spentShare = part(spent), heldShare = Math.max(0, part(used) - part(spent));
  const over = used >= cap;
  const meter = h("div", { class: `budget-meter${over ? " over" : ""}`, role: "meter",
    "aria-valuemin": 0, "aria-valuemax": cap, "aria-valuenow": used, "aria-label": label });
  meter.append(h("div", { class: "budget-spent", style: `width: ${(100 * spentShare).toFixed(1)}%` }),
    h("div", { class: "budget-held", style: `width: ${(100 * heldShare).toFixed(1)}%` }));
  return h("div", { class: "stack", "data-testid": `budget-${label}` },
    h("div", { class: "budget-line" }, h("strong", {}, label),
      h("span", { "data-testid": "budget-amount" }, `${format(used)} of ${format(cap)}`),
      h("span", { class: over ? "error" : "muted" }, over ? "reached" : `${format(Math.max(0, cap - used))} left`)),
    meter,
    held ? h("span", { class: "muted" }, `${format(held)} held by calls in flight`) : "");
}

function card(usage, mayAdminister, workspace) {
  const b = usage.budget;
  const message = h("p", { class: "error", role: "status" });
  const remove = mayAdminister ? h("button", { class: "link", "data-testid": "budget-remove", onclick: async () => {
    const query = new URLSearchParams({ kind: b.kind, period: b.period, ...(b.name ? { name: b.name } : {}) });
    try {
      await api("DELETE", `/workspaces/${encodeURIComponent(workspace)}/budgets?${query}`);
      await budgetsView(`Removed the ${b.period} budget of ${usage.scope}.`);
    } catch (failure) { message.textContent = failure.message; }
  } }, "Remove") : "";
  const tokens = (n) => `${Math.round(n).toLocaleString("en")} tokens`;
  return h("article", { class: "card stack budget", "data-testid": "budget", "data-scope": usage.scope },
    h("div", { class: "budget-line" }, h("strong", {}, usage.scope),
      h("span", { class: "muted" }, `per ${b.period} · from ${usage.period_start.slice(0, 10)}`), remove),
    b.usd != null ? bar("usd", usage.spent_usd, usage.reserved_usd, b.usd, money) : "",
    b.tokens != null ? bar("tokens", usage.spent_tokens, usage.reserved_tokens, b.tokens, tokens) : "",
    message);
}

function form(workspace) {
  const message = h("p", { class: "error", role: "status", "data-testid": "budget-form-error" });
  const field = (name, attrs) => h("input", { name, "data-testid": `budget-${name}-input`, ...attrs });
  const kind = h("select", { name: "kind", "data-testid": "budget-kind" },
    ["workspace", "blueprint", "person"].map((k) => h("option", { value: k }, k)));
  const period = h("select", { name: "period", "data-testid": "budget-period" },
    ["month", "day"].map((p) => h("option", { value: p }, p)));
  const name = field("name", { placeholder: "blueprint or person", autocomplete: "off" });
  const usd = field("usd", { type: "number", min: 0, step: "any", placeholder: "USD cap", inputmode: "decimal" });
  const tokens = field("tokens", { type: "number", min: 0, step: 1, placeholder: "token cap", inputmode: "numeric" });
  const set = async (event) => {
    event.preventDefault();
    const number = (input) => (input.value === "" ? null : Number(input.value));
    try {
      await api("PUT", `/workspaces/${encodeURIComponent(workspace)}/budgets`, { kind: kind.value,
        name: kind.value === "workspace" ? null : name.value, period: period.value,
        usd: number(usd), tokens: number(tokens) });
      await budgetsView(`Set the ${period.value} budget.`);
    } catch (failure) { message.textContent = failure.message; }
  };
  return h("form", { class: "card stack", "data-testid": "budget-form", novalidate: true, onsubmit: set },
    h("h2", {}, "Set a budget"),
    h("div", { class: "budget-line" }, kind, name, period),
    h("div", { class: "budget-line" }, usd, tokens, h("button", { type: "submit", "data-testid": "budget-set" }, "Set")),
    message);
}

export async function budgetsView(notice = "") {
  let me, answer, workspace;
  try {
    me = await api("GET", "/me");
    workspace = workspaceOf(me.workspaces || {});
    answer = await api("GET", `/workspaces/${encodeURIComponent(workspace)}/budgets`);
  } catch (failure) {
    return show(h("section", { class: "card stack" }, h("h1", {}, "Budgets"),
      h("p", { class: "error", "data-testid": "budgets-error" }, failure.message)));
  }
  const role = (me.workspaces || {})[workspace];
  const mayAdminister = role === "owner" || role === "admin";
  const picker = h("select", { "data-testid": "budgets-workspace",
    onchange: (e) => { location.hash = `#/budgets?workspace=${encodeURIComponent(e.target.value)}`; } },
  Object.keys(me.workspaces || {}).sort().map((w) => h("option", { value: w, selected: w === workspace }, w)));
  show(h("section", { class: "stack" },
    h("div", { class: "card stack" }, h("h1", {}, "Budgets"),
      h("p", { class: "muted" }, "What runs may spend across runs, per UTC day or month. A run that would pass one pauses, naming it; raise it and resume the run."),
      h("label", {}, "Workspace ", picker),
      notice ? h("p", { "data-testid": "budgets-notice" }, notice) : ""),
    answer.budgets.length ? answer.budgets.map((u) => card(u, mayAdminister, workspace))
      : h("p", { class: "card muted", "data-testid": "no-budgets" }, `No budgets in ${workspace}.`),
    mayAdminister ? form(workspace) : ""));
}
