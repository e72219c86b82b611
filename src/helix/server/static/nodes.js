// Nodes: where this server drives runs (GET /nodes): each node's state, address, CPU and
// memory, labels, and the runs it drives; owners and admins may drain one (its runs
// move to other nodes at their next turn boundary). Readable on a phone: the table
// turns into one card per node below 600px (style.css).
import { api, h, show } from "./lib.js";

const STATE = { alive: "completed", draining: "waiting", dead: "failed" };
const COLUMNS = ["Node", "State", "Address", "CPU", "Memory", "Labels", "Runs", ""];

const gib = (bytes) => (bytes == null ? "—" : `${(bytes / 2 ** 30).toFixed(1)} GiB`);

function cell(label, ...children) {
  return h("td", { "data-label": label }, ...children);
}

function row(node, reload) {
  const message = h("p", { class: "error", "data-testid": "drain-error", role: "status" });
  const drain = node.state === "alive" ? h("button", {
    class: "danger", "data-testid": "drain",
    onclick: async () => {
      const ask = `Drain node ${node.id}? It takes no new runs, and its ${node.run_count} ` +
        "run(s) move to other nodes at their next turn boundary.";
      if (!confirm(ask)) return;
      drain.disabled = true;
      try {
        const answer = await api("POST", `/nodes/${encodeURIComponent(node.id)}/drain`);
        await reload(`Node ${answer.node} is draining: ${answer.run_count} run(s) move at their next turn boundary.`);
      } catch (failure) {
        message.textContent = failure.message;
        drain.disabled = false;
      }
    },
  }, "Drain") : "";
  const labels = Object.entries(node.labels || {});
  return h("tr", { "data-testid": "node", "data-id": node.id },
    cell("Node", h("code", { class: "node-id" }, node.id)),
    cell("State", h("span", { class: `status ${STATE[node.state] || ""}`, "data-testid": "node-state" }, node.state)),
    cell("Address", node.address || "—"),
    cell("CPU", node.resources.CPU == null ? "—" : String(node.resources.CPU)),
    cell("Memory", gib(node.resources.memory)),
    cell("Labels", labels.length ? h("span", { class: "row" },
      labels.map(([k, v]) => h("span", { class: "chip", "data-testid": "node-label" }, `${k}=${v}`))) : "—"),
    cell("Runs", h("span", { class: "stack node-runs" },
      h("span", { "data-testid": "node-run-count" }, String(node.run_count)),
      node.runs.map((id) => h("a", { href: `#/runs/${id}`, "data-testid": "node-run" }, id)))),
    cell("", drain, message));
}

export async function nodesView(notice = "") {
  let answer;
  try {
    answer = await api("GET", "/nodes");
  } catch (failure) {
    return show(h("section", { class: "card stack" }, h("h1", {}, "Nodes"),
      h("p", { class: "error", "data-testid": "nodes-error" }, failure.message)));
  }
  const reload = (text) => nodesView(text);
  show(h("section", { class: "card stack" },
    h("h1", {}, "Nodes"),
    h("p", { class: "muted" }, `Where this server drives runs (the ${answer.executor} executor). ` +
      "Draining a node moves its runs elsewhere at their next turn boundary."),
    notice ? h("p", { "data-testid": "nodes-notice" }, notice) : "",
    h("table", { class: "nodes", "data-testid": "node-list" },
      h("thead", {}, h("tr", {}, COLUMNS.map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, answer.nodes.map((node) => row(node, reload))))));
}
