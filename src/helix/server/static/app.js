// The Helix dashboard: plain ES modules, no build step. It speaks the public API only.
import { policyReplay } from "./policy.js";

const API = "/api/v1";
const view = document.getElementById("view");
let token = localStorage.getItem("helix.token");
let closeLive = () => {};

class ApiError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

// Every call goes through here: the token, and the error body turned into an ApiError.
async function request(method, path, body) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const answer = await fetch(API + path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!answer.ok) {
    const data = await answer.json().catch(() => ({}));
    const error = data.error || { code: "error", message: answer.statusText };
    if (answer.status === 401 && token && !path.startsWith("/auth/")) signOut();
    throw new ApiError(answer.status, error.code, error.message);
  }
  return answer;
}

const api = async (method, path, body) =>
  (await request(method, path, body)).json().catch(() => ({}));

// Answers that are not JSON (a file's bytes, a diff), as text.
const apiText = async (path) => (await request("GET", path)).text();

// Elements are built with textContent only: event data never becomes markup.
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "style") el.style.cssText = value; // the CSP refuses style attributes
    else if (value === true) el.setAttribute(key, "");
    else if (value !== false && value != null) el.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child != null) el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

const money = (usd) => (usd == null ? "—" : `$${Number(usd).toFixed(4)}`);
const badge = (status) => h("span", { class: `status ${status}`, "data-testid": "status" }, status);
const show = (...nodes) => view.replaceChildren(...nodes);

function signOut() {
  token = null;
  localStorage.removeItem("helix.token");
  document.getElementById("who").textContent = "";
  document.getElementById("logout").hidden = true;
  location.hash = "#/login";
}

async function socket(path, params, onEvent, onClose) {
  const { token: wsToken } = await api("POST", "/auth/ws-token");
  const query = new URLSearchParams({ token: wsToken, ...params });
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${scheme}://${location.host}${API}${path}?${query}`);
  ws.onmessage = (message) => onEvent(JSON.parse(message.data));
  ws.onclose = (closed) => onClose && onClose(closed);
  return ws;
}

function loginView(message) {
  const error = h("p", { class: "error", "data-testid": "login-error" }, message || "");
  const form = h("form", { class: "card stack", "data-testid": "login" },
    h("h1", {}, "Sign in"),
    h("input", { name: "username", placeholder: "Username", autocomplete: "username", required: true }),
    h("input", { name: "password", type: "password", placeholder: "Password",
      autocomplete: "current-password", required: true }),
    h("button", { type: "submit" }, "Sign in"), error);
  form.addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    const data = new FormData(form);
    try {
      const answer = await api("POST", "/auth/login",
        { username: data.get("username"), password: data.get("password") });
      signIn(answer.token);
    } catch (failure) { error.textContent = failure.message; }
  });
  show(form);
}

function signIn(newToken) {
  token = newToken;
  localStorage.setItem("helix.token", token);
  location.hash = "#/";
}

async function runsView() {
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
    h("label", { class: "row muted" }, h("input", { name: "auto", type: "checkbox", style: "width:auto" }),
      "Approve every tool call automatically"),
    h("button", { type: "submit" }, "Start"), error);
  form.addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    const data = new FormData(form);
    const body = { objective: data.get("objective"), model: data.get("model"),
      auto_approve: data.get("auto") === "on" };
    if (data.get("budget")) body.budget_usd = Number(data.get("budget"));
    try {
      const run = await api("POST", "/runs", body);
      location.hash = `#/runs/${run.id}`;
    } catch (failure) { error.textContent = failure.message; }
  });
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
  const ws = await socket("/stream", {}, (event) => {
    if (!event.seq && event.seq !== 0) return;
    clearTimeout(pending);
    pending = setTimeout(load, 150);
  });
  closeLive = () => ws.close();
}

function describe(event) {
  const d = event.data || {};
  switch (event.type) {
    case "run.created": return [`Objective: ${d.objective}`, `Model: ${d.model}`];
    case "model.responded": return [d.text || "", ...(d.tool_calls || []).map(
      (c) => `→ ${c.name}(${JSON.stringify(c.args)})`), `${money(d.cost_usd)} · ${Math.round(d.latency_ms)} ms`];
    case "tool.requested": return [`${d.name} ${JSON.stringify(d.args)}`];
    case "gate.decided": return [`${d.gate}: ${d.verdict} — ${d.reason || ""}`];
    case "tool.completed": return [`${d.ok ? "ok" : "failed"} · ${Math.round(d.duration_ms)} ms`, d.output || ""];
    case "approval.requested": return [`${d.name} ${JSON.stringify(d.args)}`];
    case "approval.decided": return [`${d.decision} by ${d.by}${d.auto ? " (auto)" : ""}`];
    case "file.changed": return [`${d.op} ${d.path}`];
    case "steer.received": return [d.message];
    case "run.completed": return [d.summary || ""];
    case "run.failed": return [d.error];
    case "run.paused": return [`reason: ${d.reason}`];
    case "budget.exceeded": return [`spent ${money(d.spent_usd)} of ${money(d.cap_usd)}`];
    case "agent.spawned": return [`child run ${d.child_run_id}: ${d.objective}`];
    case "agent.reported": return [`${d.child_run_id} ${d.status || "completed"} · ${money(d.cost_usd)}`, d.report];
    case "egress.counted": return [(d.hosts || []).map((x) => `${x.host}: ${x.verdict} (${x.attempts} tries)`).join(", ")
      + (d.other_attempts ? ` · ${d.other_attempts} more to other hosts` : "")];
    case "world.rolled_back": return [`to turn ${d.to_turn} by ${d.by}`,
      ...(d.conflicts || []).map((c) => `conflict: ${c.path}: ${c.detail}`)];
    case "world.kept": return [`${d.branch} into ${d.target}`,
      ...(d.conflicts || []).map((c) => `conflict: ${c.path}: ${c.detail}`)];
    default: return [];
  }
}

async function runView(runId) {
  let run = await api("GET", `/runs/${runId}`);
  let budget = null;
  let last = -1;
  const approvals = new Map();
  const title = h("h1", {}, run.objective);
  const head = h("div", { class: "row" });
  const stats = h("div", { class: "stats", "data-testid": "stats" });
  const error = h("p", { class: "error", "data-testid": "run-error" });
  const timeline = h("ol", { class: "timeline", "data-testid": "timeline" });
  const asks = h("div", { "data-testid": "approvals" });
  const act = (label, path, cls = "secondary") => h("button", { class: cls, onclick: async () => {
    try { error.textContent = ""; run = await api("POST", `/runs/${runId}/${path}`); paint(); }
    catch (failure) { error.textContent = failure.message; }
  } }, label);
  const steer = h("form", { class: "row", "data-testid": "steer" },
    h("input", { name: "message", placeholder: "Tell the agent something…", required: true }),
    h("button", { type: "submit" }, "Send"));
  steer.addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    const input = steer.elements.message;
    try { await api("POST", `/runs/${runId}/steer`, { message: input.value }); input.value = ""; }
    catch (failure) { error.textContent = failure.message; }
  });

  function paint() {
    head.replaceChildren(badge(run.status), h("span", { class: "muted" }, `${run.id} · ${run.model}`),
      ...(run.parent ? [h("a", { href: `#/runs/${run.parent.run_id}` }, "parent")] : []));
    const share = budget ? Math.min(100, (100 * run.cost_usd) / budget) : 0;
    stats.replaceChildren(
      h("div", {}, "Cost", h("b", { "data-testid": "cost" }, `${money(run.cost_usd)}${budget ? ` of ${money(budget)}` : ""}`),
        budget ? h("div", { class: "meter" }, h("span", { style: `width:${share}%` })) : null),
      h("div", {}, "Tokens", h("b", {}, `${run.input_tokens} in · ${run.output_tokens} out`)),
      h("div", {}, "Turns", h("b", {}, run.turns)),
      h("div", {}, "Events", h("b", {}, run.events)));
    asks.replaceChildren(...[...approvals.values()].map((a) => h("div", { class: "card approval" },
      h("h2", {}, `Approve ${a.name}?`), h("pre", {}, JSON.stringify(a.args, null, 2)),
      h("div", { class: "row" },
        h("button", { class: "allow", onclick: () => decide(a.request_id, "allow") }, "Allow"),
        h("button", { class: "deny", onclick: () => decide(a.request_id, "deny") }, "Deny")))));
  }

  async function decide(requestId, decision) {
    try { await api("POST", `/runs/${runId}/approvals/${requestId}`, { decision }); }
    catch (failure) { error.textContent = failure.message; }
  }

  // The run's world: its files at a point, a diff between two, a rollback.
  const point = h("input", { name: "point", value: "now", size: 6, "aria-label": "turn",
    "data-testid": "world-point" });
  const worldOut = h("div", { class: "stack", "data-testid": "world" });
  const at = () => encodeURIComponent(point.value.trim() || "now");
  async function files() {
    try {
      const { files: listed } = await api("GET", `/runs/${runId}/files?turn=${at()}`);
      worldOut.replaceChildren(listed.length ? h("ul", { class: "files" }, ...listed.map((f) =>
        h("li", {}, f.kind === "file" ? h("button", { class: "link", onclick: () => open(f.path) },
          f.path) : `${f.path}${f.kind === "dir" ? "/" : ""}`, h("span", { class: "muted" },
          ` ${f.size} B`)))) : h("p", { class: "muted" }, "The world is empty here."));
    } catch (failure) { error.textContent = failure.message; }
  }
  async function open(path) {
    try {
      const text = await apiText(`/runs/${runId}/files/${encodeURI(path)}?turn=${at()}`);
      worldOut.replaceChildren(h("h3", {}, path), h("pre", { "data-testid": "file" }, text));
    } catch (failure) { error.textContent = failure.message; }
  }
  async function diff() {
    try {
      const text = await apiText(`/runs/${runId}/diff?from=start&to=${at()}`);
      worldOut.replaceChildren(h("pre", { class: "diff", "data-testid": "diff" },
        text || "No change."));
    } catch (failure) { error.textContent = failure.message; }
  }
  async function rollback() {
    const to = point.value.trim() === "now" ? "start" : point.value.trim();
    if (!confirm(`Roll the world back to ${to === "start" ? "the start" : `turn ${to}`}?`)) return;
    try {
      const done = await api("POST", `/runs/${runId}/rollback`, { to: /^\d+$/.test(to) ? Number(to) : to });
      worldOut.replaceChildren(h("p", { "data-testid": "rolled-back" },
        `Rolled back to turn ${done.to_turn}: ${done.restored.length} restored, ` +
        `${done.removed.length} removed, ${done.cannot_undo.length} could not be undone.`));
    } catch (failure) { error.textContent = failure.message; }
  }
  const world = h("section", { class: "card stack" }, h("h2", {}, "World"),
    h("div", { class: "row" }, h("label", {}, "At ", point),
      h("button", { class: "secondary", onclick: files }, "Files"),
      h("button", { class: "secondary", onclick: diff }, "Diff from start"),
      h("button", { class: "danger", onclick: rollback }, "Roll back")),
    worldOut);

  async function fork(turn) {
    try { const made = await api("POST", `/runs/${runId}/fork`, { turn }); location.hash = `#/runs/${made.id}`; }
    catch (failure) { error.textContent = failure.message; }
  }

  let refresh = null;
  function add(event) {
    if (event.seq === undefined) return;  // an ack or an error answer
    if (event.seq <= last) return;
    last = event.seq;
    const d = event.data || {};
    if (event.type === "run.created" && d.budget) budget = d.budget.usd;
    if (event.type === "approval.requested") approvals.set(d.request_id, d);
    if (event.type === "approval.decided") approvals.delete(d.request_id);
    const lines = describe(event).filter((line) => line !== "");
    const verdict = event.type === "gate.decided" ? `verdict-${d.verdict}` : "";
    timeline.append(h("li", { "data-type": event.type },
      h("span", { class: "seq" }, `#${event.seq}`),
      h("div", {}, h("span", { class: `type ${verdict}` }, event.type),
        event.turn ? h("span", { class: "muted" }, ` · turn ${event.turn}`) : null,
        lines.length ? h("pre", {}, lines.join("\n")) : null,
        event.type === "turn.ended" ? h("button", { class: "link", "data-testid": "fork",
          onclick: () => fork(d.turn) }, `Fork from turn ${d.turn}`) : null)));
    clearTimeout(refresh);
    refresh = setTimeout(async () => { run = await api("GET", `/runs/${runId}`); paint(); }, 100);
    paint();
  }

  show(h("section", { class: "card" }, title, head, stats, error),
    asks,
    h("section", { class: "card stack" }, h("h2", {}, "Controls"), steer,
      h("div", { class: "row" }, act("Pause", "pause"), act("Resume", "resume"), act("Cancel", "cancel", "danger"))),
    world,
    policyReplay(runId, { h, api }),
    h("section", { class: "card" }, h("h2", {}, "Timeline"), timeline));
  paint();

  let stopped = false;
  let ws = null;
  const connect = async () => {
    ws = await socket(`/runs/${runId}/stream`, { after: String(last) }, add, (closed) => {
      if (!stopped && closed.code !== 4401 && closed.code !== 4404) setTimeout(connect, 1000);
    });
  };
  await connect();
  closeLive = () => { stopped = true; ws && ws.close(); };
}

async function route() {
  closeLive();
  closeLive = () => {};
  const hash = location.hash || "#/";
  if (hash.startsWith("#login=")) {
    try {
      const answer = await api("POST", "/auth/link", { token: hash.slice("#login=".length) });
      return signIn(answer.token);
    } catch (failure) { return loginView(failure.message); }
  }
  if (!token) return loginView();
  try {
    const me = await api("GET", "/me");
    document.getElementById("who").textContent = me.user;
    document.getElementById("logout").hidden = false;
    const match = hash.match(/^#\/runs\/([A-Za-z0-9_-]+)/);
    if (match) await runView(match[1]);
    else await runsView();
  } catch (failure) {
    if (token) show(h("p", { class: "error" }, failure.message));
  }
}

document.getElementById("logout").addEventListener("click", signOut);
window.addEventListener("hashchange", route);
route();
