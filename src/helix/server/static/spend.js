// Spend: what runs' own model calls cost, grouped (model, provider, role, blueprint, workspace,
// person, run) and over time, as stacked SVG bars and a table. Filters live in the hash
// (#/spend?by=model&bucket=day&from=7d), so a view can be shared; GET /spend does the sums.
import { api, h, money, show } from "./lib.js";

const GROUPS = ["model", "provider", "blueprint", "workspace", "person", "run", "role"];
const WINDOWS = [["", "all time"], ["24h", "last 24 hours"], ["7d", "last 7 days"], ["30d", "last 30 days"]];
const COLOURS = ["#3557d4", "#1d7a3a", "#9a6700", "#b3261e", "#7a5cc7", "#0f7c8c", "#c2569b", "#5f6b7a"];
const FILTERS = ["workspace", "model", "provider", "blueprint", "person"];
const TOP = 7; // groups drawn on their own; the rest stack as "other"
const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  for (const child of children) el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return el;
}

function words() {
  const params = new URLSearchParams(location.hash.split("?")[1] || "");
  return { by: GROUPS.includes(params.get("by")) ? params.get("by") : "model",
    bucket: params.get("bucket") === "hour" ? "hour" : "day", from: params.get("from") || "",
    ...Object.fromEntries(FILTERS.map((name) => [name, params.get(name) || ""])) };
}

function go(changed) {
  const next = { ...words(), ...changed };
  const query = new URLSearchParams(Object.entries(next).filter(([, v]) => v));
  location.hash = `#/spend?${query}`;
}

// A filter's select; a value from the hash that no run has is kept as an option too.
const select = (label, name, options, value) => h("label", {}, label,
  h("select", { name, "data-testid": `spend-${name}`, onchange: (e) => go({ [name]: e.target.value }) },
    [...options, ...(options.some(([v]) => v === value) ? [] : [[value, value]])]
      .map(([v, text]) => h("option", { value: v, selected: v === value }, text))));

// Stacked bars: one per bucket, a segment per group, heights in USD.
function chart(answer, keys, colour) {
  const starts = [...new Set(answer.series.map((p) => p.start))].sort();
  if (!starts.length) return h("p", { class: "muted", "data-testid": "spend-empty" }, "No spend in this window.");
  const stacks = starts.map((start) => {
    const parts = new Map();
    for (const p of answer.series.filter((q) => q.start === start)) {
      const key = keys.includes(p.key) ? p.key : "other";
      parts.set(key, (parts.get(key) || 0) + p.usage.cost_usd);
    }
    return { start, parts };
  });
  const most = Math.max(...stacks.map((s) => [...s.parts.values()].reduce((a, b) => a + b, 0)), 1e-9);
  const W = Math.round(Math.max(300, Math.min(600, window.innerWidth - 48))), H = 220, left = 56, bottom = 28, top = 10;
  const step = (W - left - 8) / stacks.length, width = Math.max(Math.min(step * 0.7, 60), 2);
  const y = (usd) => top + (H - top - bottom) * (1 - usd / most);
  const drawn = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "data-testid": "spend-svg",
    "aria-label": `Spend per ${answer.bucket} by ${answer.by}` });
  drawn.append(svg("line", { x1: left, x2: W, y1: H - bottom, y2: H - bottom, stroke: "#c8c8cc" }),
    svg("text", { x: left - 6, y: top + 10, "text-anchor": "end", "font-size": 11, fill: "#6b6b70" }, money(most)),
    svg("text", { x: left - 6, y: H - bottom, "text-anchor": "end", "font-size": 11, fill: "#6b6b70" }, "$0"));
  const label = (start) => (answer.bucket === "hour" ? `${start.slice(5, 10)} ${start.slice(11, 13)}h` : start.slice(5, 10));
  const every = Math.ceil(stacks.length / 6);
  stacks.forEach((stack, i) => {
    const x = left + i * step + (step - width) / 2;
    let base = 0;
    for (const key of [...keys, "other"]) {
      const usd = stack.parts.get(key);
      if (!usd) continue;
      const rect = svg("rect", { x, y: y(base + usd), width, height: Math.max(y(base) - y(base + usd), 0.5),
        fill: colour(key), "data-testid": "spend-bar", "data-key": key, "data-start": stack.start,
        "data-usd": usd.toFixed(6) });
      rect.append(svg("title", {}, `${key} · ${stack.start} · ${money(usd)}`));
      drawn.append(rect);
      base += usd;
    }
    if (i % every === 0) drawn.append(svg("text", { x: x + width / 2, y: H - 10, "text-anchor": "middle",
      "font-size": 11, fill: "#6b6b70" }, label(stack.start)));
  });
  return drawn;
}

function table(answer, colour) {
  const rows = Object.entries(answer.groups).sort((a, b) => b[1].cost_usd - a[1].cost_usd);
  const total = answer.total.cost_usd || 0;
  const cell = (key) => (answer.by === "run" ? h("a", { href: `#/runs/${key}` }, key) : key);
  return h("table", { class: "spend-table", "data-testid": "spend-table" },
    h("thead", {}, h("tr", {}, h("th", {}, answer.by), h("th", {}, "USD"), h("th", { class: "wide" }, "in"),
      h("th", { class: "wide" }, "out"), h("th", {}, "share"))),
    h("tbody", {}, rows.map(([key, u]) => {
      const swatch = h("i", {});
      swatch.style.background = colour(key);
      return h("tr", { "data-testid": "spend-row", "data-key": key },
        h("td", {}, cell(key)), h("td", { "data-testid": "spend-usd" }, money(u.cost_usd)),
        h("td", { class: "wide" }, u.input_tokens), h("td", { class: "wide" }, u.output_tokens),
        h("td", {}, total > 0 ? `${Math.round((100 * u.cost_usd) / total)}%` : "—"));
    })),
    h("tfoot", {}, h("tr", {}, h("th", {}, `total · ${answer.runs} runs`),
      h("th", { "data-testid": "spend-total" }, money(answer.total.cost_usd)),
      h("th", { class: "wide" }, answer.total.input_tokens), h("th", { class: "wide" }, answer.total.output_tokens),
      h("th", {}, answer.total.unpriced_calls ? `${answer.total.unpriced_calls} unpriced` : ""))));
}

export async function spendView() {
  const chosen = words();
  const query = new URLSearchParams({ by: chosen.by, bucket: chosen.bucket });
  for (const name of ["from", ...FILTERS]) if (chosen[name]) query.set(name, chosen[name]);
  const [me, answer, every] = await Promise.all([api("GET", "/me"), api("GET", `/spend?${query}`),
    api("GET", "/spend")]);
  const keys = Object.entries(answer.groups).sort((a, b) => b[1].cost_usd - a[1].cost_usd)
    .slice(0, TOP).map(([key]) => key);
  const colour = (key) => (key === "other" ? "#b0b0b8" : COLOURS[keys.indexOf(key) % COLOURS.length]);
  const legend = h("div", { class: "spend-legend" }, [...keys, ...(Object.keys(answer.groups).length > TOP ? ["other"] : [])]
    .map((key) => { const i = h("i", {}); i.style.background = colour(key); return h("span", {}, i, key); }));
  const filters = h("div", { class: "spend-filters", "data-testid": "spend-filters" },
    select("Group by", "by", GROUPS.map((g) => [g, g]), chosen.by),
    select("Per", "bucket", [["day", "day"], ["hour", "hour"]], chosen.bucket),
    select("Window", "from", WINDOWS, chosen.from),
    select("Workspace", "workspace", [["", "all mine"], ...Object.keys(me.workspaces || {}).map((w) => [w, w])], chosen.workspace),
    ...[["Model", "model", "all models"], ["Provider", "provider", "all providers"],
      ["Blueprint", "blueprint", "all blueprints"], ["Person", "person", "everyone"]].map(([label, name, all]) =>
      select(label, name, [["", all], ...Object.keys(every[`by_${name}`]).map((k) => [k, k])], chosen[name])));
  show(h("section", { class: "card stack" }, h("h1", {}, "Spend"),
    h("p", { class: "muted" }, "What runs' own model calls cost (a fork's inherited history and a "
      + "child's calls count once, in their own run)."), filters),
  h("section", { class: "card spend-chart", "data-testid": "spend-chart" },
    h("h2", {}, `USD per ${answer.bucket} by ${answer.by}`), chart(answer, keys, colour), legend),
  h("section", { class: "card" }, table(answer, colour)));
}
