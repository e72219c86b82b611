// A run's trace: turns, model calls, gate checks and tool calls as a waterfall, child runs
// nested under the call that started them. Built from GET /runs/{id}/trace (one axis in ms).
import { api, h, money, show } from "./lib.js";

const LABELS = { run: "run", turn: "turn", model: "model", call: "call", gates: "gates", tool: "tool" };

export const ms = (value) => (value == null ? "…" : value >= 1000 ? `${(value / 1000).toFixed(2)} s`
  : `${Math.round(value)} ms`);
const tokens = (span) => `${span.input_tokens} in · ${span.output_tokens} out`;

// Every span in the order it happened, with its depth (a child run's spans one level deeper).
function flatten(span, depth = 0, out = []) {
  out.push({ span, depth });
  for (const child of span.children) flatten(child, depth + 1, out);
  return out;
}

function what(span) {
  switch (span.kind) {
    case "run": return `${span.run_id} · ${span.status || ""}`;
    case "turn": return `${tokens(span)} · ${money(span.cost_usd)}`;
    case "model": return `${tokens(span)} · ${money(span.cost_usd)}${span.status === "failed" ? " · failed" : ""}`;
    case "gates": return `${span.status}${span.detail ? ` — ${span.detail}` : ""}`;
    case "tool": return `${span.status || "running"}${span.detail ? ` · ${span.detail}` : ""}`;
    default: return span.status || "";
  }
}

function row({ span, depth }, total) {
  const end = span.end_ms == null ? total : span.end_ms;
  const left = total > 0 ? (100 * span.start_ms) / total : 0;
  const bar = h("span", { class: `wf-bar wf-${span.kind}${span.status === "deny" || span.status === "failed" ? " bad" : ""}`,
    "data-testid": "bar" });
  bar.style.left = `${Math.min(left, 99.5)}%`;
  bar.style.width = `${Math.max(total > 0 ? (100 * (end - span.start_ms)) / total : 0, 0.5)}%`;
  const label = h("div", { class: "label" },
    h("span", { class: `kind kind-${span.kind}` }, LABELS[span.kind]),
    h("span", { class: "name" }, span.kind === "turn" ? `Turn ${span.turn}` : span.name),
    h("span", { class: "muted" }, ` ${ms(span.duration_ms)}`));
  label.style.paddingLeft = `${Math.min(depth, 8) * 0.7}rem`;
  const li = h("li", { class: `span span-${span.kind}`, "data-testid": "span", "data-kind": span.kind,
    "data-depth": String(depth), "data-run": span.run_id },
  label, h("div", { class: "track" }, bar), h("div", { class: "what muted" }, what(span)));
  return li;
}

export async function traceView(runId) {
  const body = h("ol", { class: "waterfall", "data-testid": "waterfall" });
  const summary = h("div", { class: "stats", "data-testid": "trace-summary" });
  const error = h("p", { class: "error" });
  const title = h("h1", {}, "Trace");
  async function load() {
    try {
      const root = await api("GET", `/runs/${runId}/trace`);
      title.textContent = `Trace: ${root.name}`;
      const rows = flatten(root);
      const total = Math.max(...rows.map(({ span }) => span.end_ms ?? span.start_ms), 1);
      const turns = root.children.filter((s) => s.kind === "turn").length;
      const sum = (kind) => rows.filter(({ span }) => span.kind === kind)
        .reduce((acc, { span }) => acc + (span.end_ms == null ? 0 : span.end_ms - span.start_ms), 0);
      summary.replaceChildren(
        h("div", {}, "Wall time", h("b", {}, ms(total))),
        h("div", {}, "Turns", h("b", {}, turns)),
        h("div", {}, "Model", h("b", { "data-testid": "model-time" }, ms(sum("model")))),
        h("div", {}, "Gates", h("b", {}, ms(sum("gates")))),
        h("div", {}, "Tools", h("b", {}, ms(sum("tool")))),
        h("div", {}, "Cost (own)", h("b", { "data-testid": "trace-cost" }, money(root.cost_usd))));
      body.replaceChildren(...rows.map((r) => row(r, total)));
    } catch (failure) { error.textContent = failure.message; }
  }
  show(h("section", { class: "card" }, title,
    h("div", { class: "row" }, h("a", { href: `#/runs/${runId}` }, "← Run"),
      h("button", { class: "secondary", onclick: load }, "Refresh")),
    h("p", { class: "muted" }, "Model latency and tool time are as logged; gate time is measured "
      + "from the call's request to its start (an approval's wait included)."),
    summary, error),
  h("section", { class: "card trace" }, h("h2", {}, "Waterfall"), body));
  await load();
}
