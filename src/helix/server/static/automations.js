// Automations: a workspace's triggers (GET /automations): what fires them (a cron schedule,
// a signed webhook, a run ending), what they start, the missed-slot policy, the next
// firing and the last one with its run. Members who may act pause and resume them.
// Readable on a phone: the table turns into one card per automation below 600px
// (the nodes table's rules, style.css).
import { api, h, show } from "./lib.js";

const COLUMNS = ["Automation", "Trigger", "Starts", "Next", "Last", ""];

function cell(label, ...children) {
  return h("td", { "data-label": label }, ...children);
}

function trigger(t) {
  if (t.kind === "cron") return h("span", {}, "cron ", h("code", {}, t.cron), t.timezone === "UTC" ? "" : ` (${t.timezone})`);
  if (t.kind === "webhook") return "signed webhook";
  return `when a run ends ${t.event.replace("run.", "")}` + (t.blueprint ? ` (blueprint ${t.blueprint})` : "");
}

function target(t) {
  const what = t.blueprint || t.workflow || t.plan || "";
  return h("span", { class: "stack" }, `${t.kind} ${what}`, t.objective ? h("span", { class: "muted" }, t.objective) : "");
}

function last(firing) {
  if (!firing) return h("span", { class: "muted" }, "never fired");
  const when = h("span", { class: "muted" }, firing.fired_at.replace("T", " ").slice(0, 19));
  if (firing.run_id) {
    return h("span", { class: "stack" }, when,
      h("a", { href: `#/runs/${firing.run_id}`, "data-testid": "automation-run" }, firing.run_id));
  }
  return h("span", { class: "stack" }, when, h("span", { class: "error" }, firing.error || "not started"));
}

function row(automation, mayAct, reload) {
  const message = h("p", { class: "error", "data-testid": "automation-error", role: "status" });
  const paused = automation.paused;
  const toggle = mayAct ? h("button", {
    "data-testid": paused ? "resume" : "pause",
    onclick: async () => {
      toggle.disabled = true;
      try {
        await api("POST", `/automations/${encodeURIComponent(automation.id)}/${paused ? "resume" : "pause"}`);
        await reload(`${automation.name} ${paused ? "resumed" : "paused"}.`);
      } catch (failure) {
        message.textContent = failure.message;
        toggle.disabled = false;
      }
    },
  }, paused ? "Resume" : "Pause") : "";
  return h("tr", { "data-testid": "automation", "data-id": automation.id },
    cell("Automation", h("span", { class: "stack" }, h("strong", {}, automation.name),
      h("span", { class: "muted" }, automation.workspace),
      h("span", { class: `status ${paused ? "paused" : "completed"}`, "data-testid": "automation-state" },
        paused ? "paused" : "active"))),
    cell("Trigger", trigger(automation.trigger), h("span", { class: "muted" }, ` · missed: ${automation.missed}`)),
    cell("Starts", target(automation.target)),
    cell("Next", h("span", { "data-testid": "automation-next" },
      automation.next_firing ? automation.next_firing.replace("T", " ").slice(0, 16) + " UTC" : "—")),
    cell("Last", last(automation.last_firing)),
    cell("", toggle, message));
}

export async function automationsView(notice = "") {
  let answer, me;
  try {
    [answer, me] = await Promise.all([api("GET", "/automations"), api("GET", "/me")]);
  } catch (failure) {
    return show(h("section", { class: "card stack" }, h("h1", {}, "Automations"),
      h("p", { class: "error", "data-testid": "automations-error" }, failure.message)));
  }
  const roles = me.workspaces || {};
  const reload = (text) => automationsView(text);
  const list = answer.automations.length
    ? h("table", { class: "nodes automations", "data-testid": "automation-list" },
      h("thead", {}, h("tr", {}, COLUMNS.map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, answer.automations.map((a) => row(a, roles[a.workspace] && roles[a.workspace] !== "viewer", reload))))
    : h("p", { class: "muted", "data-testid": "no-automations" },
      "No automations yet. Add one with helix automations add (a cron schedule, a webhook, or a run ending).");
  show(h("section", { class: "card stack" },
    h("h1", {}, "Automations"),
    h("p", { class: "muted" }, "What starts runs by itself in your workspaces. Times are UTC."),
    notice ? h("p", { "data-testid": "automations-notice" }, notice) : "",
    list));
}
