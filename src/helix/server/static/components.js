// Generative UI components (ui.component events) drawn in the conversation: a table, a
// diff, an options card (its buttons post the person's choice), Markdown, a chart. Props
// come from an agent or a plugin: every piece is built as DOM nodes with textContent
// (lib.js's h), never as markup, so nothing in them can inject HTML. The engineering
// pack's kinds are drawn by engineering.js; a kind this page does not know (another
// plugin's) is shown as its JSON.
import { h } from "./lib.js";
import { engDiff, testResults } from "./engineering.js";

const SVG = "http://www.w3.org/2000/svg";
const PALETTE = ["#3557d4", "#1d7a3a", "#9a6700", "#b3261e", "#7a5cc7", "#0f7b8a"];
const cell = (value) => (value == null ? "" : String(value));

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  for (const child of children.flat()) if (child != null) el.append(child);
  return el;
}

function table(props) {
  const head = h("tr", {}, (props.columns || []).map((c) => h("th", { scope: "col" }, cell(c))));
  const rows = (props.rows || []).map((row) => h("tr", {}, row.map((c) => h("td", {}, cell(c)))));
  return h("div", { class: "ui-table-wrap" },
    h("table", { class: "ui-table", "data-testid": "ui-table" }, h("thead", {}, head), h("tbody", {}, rows)));
}

function diff(props) {
  const lines = String(props.diff || "").replace(/\n$/, "").split("\n");
  return h("div", {}, props.path ? h("div", { class: "path" }, props.path) : null,
    h("pre", { class: "diff", "data-testid": "ui-diff" }, lines.map((line) => h("span", {
      class: line.startsWith("+") && !line.startsWith("+++") ? "add"
        : line.startsWith("-") && !line.startsWith("---") ? "del" : line.startsWith("@@") ? "hunk" : "" },
    `${line}\n`))));
}

// Inline Markdown: `code`, **bold**, *em*, [text](http…) links; anything else is text.
const INLINE = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*\s][^*]*\*)|(\[[^\]]+\]\((https?:\/\/[^\s)]+)\))/;
function inline(text) {
  const out = [];
  let rest = text;
  for (let found = INLINE.exec(rest); found; found = INLINE.exec(rest)) {
    if (found.index) out.push(rest.slice(0, found.index));
    const [whole] = found;
    if (found[1]) out.push(h("code", {}, whole.slice(1, -1)));
    else if (found[2]) out.push(h("strong", {}, whole.slice(2, -2)));
    else if (found[3]) out.push(h("em", {}, whole.slice(1, -1)));
    else out.push(h("a", { href: found[5], rel: "noopener noreferrer nofollow", target: "_blank" },
      whole.slice(1, whole.indexOf("]("))));
    rest = rest.slice(found.index + whole.length);
  }
  if (rest) out.push(rest);
  return out;
}

// Block Markdown: headings, fenced code, lists, quotes, paragraphs. Raw HTML stays text.
export function markdown(text) {
  const root = h("div", { class: "ui-markdown", "data-testid": "ui-markdown" });
  const lines = String(text || "").split("\n");
  let list = null;
  let para = [];
  const flush = () => { if (para.length) root.append(h("p", {}, inline(para.join(" ")))); para = []; };
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i];
    const item = /^\s*(?:[-*+]|(\d+)\.)\s+(.*)$/.exec(line);
    if (!item) list = null;
    if (line.startsWith("```")) {
      flush();
      const code = [];
      for (i += 1; i < lines.length && !lines[i].startsWith("```"); i += 1) code.push(lines[i]);
      root.append(h("pre", {}, h("code", {}, code.join("\n"))));
    } else if (/^#{1,6}\s/.test(line)) {
      flush();
      const level = Math.min(6, line.indexOf(" ") + 2); // # → h3: below the page's own headings
      root.append(h(`h${level}`, {}, inline(line.replace(/^#+\s*/, ""))));
    } else if (item) {
      flush();
      if (!list) { list = h(item[1] ? "ol" : "ul"); root.append(list); }
      list.append(h("li", {}, inline(item[2])));
    } else if (line.startsWith(">")) {
      flush();
      root.append(h("blockquote", {}, inline(line.replace(/^>\s?/, ""))));
    } else if (!line.trim()) flush();
    else para.push(line.trim());
  }
  flush();
  return root;
}

// A chart as SVG: bars grouped per label, or a line per series; a legend under it.
function chart(props) {
  const labels = props.labels || [];
  const series = props.series || [];
  const values = series.flatMap((s) => s.points || []).filter((p) => typeof p === "number");
  const top = Math.max(0, ...values);
  const low = Math.min(0, ...values);
  const span = top - low || 1;
  const [W, H, left, bottom] = [320, 160, 34, 22];
  const plotW = W - left - 6;
  const plotH = H - bottom - 8;
  const y = (v) => 8 + plotH - ((v - low) / span) * plotH;
  const step = plotW / Math.max(1, labels.length);
  const parts = [svg("line", { x1: left, y1: y(0), x2: W - 6, y2: y(0), class: "axis" }),
    svg("text", { x: left - 4, y: 12, "text-anchor": "end", class: "tick" }, String(top)),
    svg("text", { x: left - 4, y: y(low), "text-anchor": "end", class: "tick" }, String(low))];
  const every = Math.ceil(labels.length / 8);
  labels.forEach((label, i) => {
    if (i % every === 0) {
      parts.push(svg("text", { x: left + step * (i + 0.5), y: H - 6, "text-anchor": "middle", class: "tick" },
        String(label).slice(0, 10)));
    }
  });
  series.forEach((s, k) => {
    const colour = PALETTE[k % PALETTE.length];
    const points = s.points || [];
    if (props.kind === "bar") {
      const width = (step * 0.8) / Math.max(1, series.length);
      points.forEach((p, i) => {
        if (typeof p !== "number") return;
        const x = left + step * i + step * 0.1 + width * k;
        parts.push(svg("rect", { x, y: Math.min(y(p), y(0)), width: Math.max(1, width - 1),
          height: Math.max(1, Math.abs(y(0) - y(p))), fill: colour },
        svg("title", {}, `${s.name} · ${labels[i]}: ${p}`)));
      });
    } else {
      const coords = points.map((p, i) => (typeof p === "number" ? `${left + step * (i + 0.5)},${y(p)}` : null))
        .filter(Boolean).join(" ");
      parts.push(svg("polyline", { points: coords, fill: "none", stroke: colour, "stroke-width": 2 }));
    }
  });
  const legend = h("div", { class: "spend-legend" }, series.map((s, k) =>
    h("span", {}, h("i", { style: `background:${PALETTE[k % PALETTE.length]}` }), String(s.name))));
  return h("div", { class: "ui-chart", "data-testid": "ui-chart", "data-kind": props.kind },
    svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": props.title || "chart" }, parts), legend);
}

// An options card: its question and a button per choice. While it waits, a click posts
// the choice; once chosen, the choice is marked and the buttons are off.
export function options(block, choose) {
  const props = block.props;
  const open = block.waiting && Boolean(choose);
  const buttons = (props.choices || []).map((option) => h("button", {
    class: `choice${block.choice === option.id ? " chosen" : ""}`,
    "data-testid": "ui-choice", "data-choice": option.id, disabled: !open,
    onclick: () => choose(block.id, option.id) },
  h("b", {}, cell(option.label)), option.description ? h("span", { class: "muted" }, cell(option.description)) : null));
  const label = (id) => cell((props.choices || []).find((o) => o.id === id)?.label ?? id);
  const state = block.choice ? `Chosen: ${label(block.choice)} (by ${block.chosenBy})`
    : block.closed ? `Closed without a choice: ${block.closed}`
      : block.waiting ? `Waiting for your choice${block.expiresAt ? ` until ${block.expiresAt}` : ""}`
        : "Shown only (the agent is not waiting for a choice)";
  return h("div", { class: "ui-options", "data-testid": "ui-options" },
    h("p", { class: "question" }, cell(props.question)),
    h("div", { class: "choices" }, buttons),
    h("p", { class: "muted", "data-testid": "ui-options-state" }, state));
}

const KINDS = {
  table, diff, markdown: (props) => markdown(props.text), chart,
  "engineering.test_results": testResults, "engineering.diff": engDiff,
};

// One ui.component block of the transcript as a card.
export function componentView(block, { choose } = {}) {
  const props = block.props || {};
  let body;
  try {
    body = block.component === "options" ? options(block, choose)
      : KINDS[block.component] ? KINDS[block.component](props)
        : h("pre", { class: "ui-json", "data-testid": "ui-json" }, JSON.stringify(props, null, 2));
  } catch (failure) { // props this page cannot draw: their JSON, never a broken page
    body = h("pre", { class: "ui-json" }, JSON.stringify(props, null, 2));
  }
  return h("div", { class: `block component ui-${block.component.replace(/[^a-z0-9-]/gi, "-")}`,
    "data-testid": "component", "data-component": block.component, "data-id": block.id || "" },
  props.title ? h("h3", {}, cell(props.title)) : null, body);
}
