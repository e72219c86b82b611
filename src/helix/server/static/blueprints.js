// Stored blueprints: a workspace's list (each at its current version), and one blueprint's
// page: its current fields, its history (who saved each version, when, the note), a diff
// of two versions (coloured lines), and Roll back (saves an old version as the next one;
// members only). Every save is a version; nothing here rewrites history.
import { api, h, show } from "./lib.js";
import { diffView } from "./conversation.js";

const base = (ws) => `/workspaces/${encodeURIComponent(ws)}/blueprints`;
const at = (ws, name) => `${base(ws)}/${encodeURIComponent(name)}`;
const page = (ws, name) => `#/blueprints/${encodeURIComponent(ws)}/${encodeURIComponent(name)}`;

async function workspaces() {
  const me = await api("GET", "/me");
  const names = Object.keys(me.workspaces).sort();
  return { me, names, initial: me.workspaces[me.user] === "owner" ? me.user : names[0] };
}

export async function blueprintsView(chosen) {
  const { names, initial } = await workspaces();
  const ws = chosen && names.includes(chosen) ? chosen : initial;
  const picker = h("select", { "aria-label": "Workspace", "data-testid": "bp-workspace", hidden: names.length < 2,
    onchange: () => { location.hash = `#/blueprints/${encodeURIComponent(picker.value)}`; } },
  names.map((n) => h("option", { value: n, selected: n === ws }, n)));
  const { latest } = await api("GET", `${base(ws)}?latest=true`);
  show(h("section", { class: "card stack" }, h("h1", {}, "Blueprints"),
    h("p", { class: "muted" }, "Agent definitions stored in this workspace. Every save is a new version; " +
      "a run names the version it used. Save one with helix blueprints save NAME FILE."),
    picker,
    h("ul", { class: "runs", "data-testid": "blueprints" }, latest.length
      ? latest.map((b) => h("li", {}, h("a", { href: page(ws, b.name) },
        h("span", {}, h("b", {}, b.name), b.note ? ` ${b.note}` : ""),
        h("span", { class: "chip", "data-testid": "bp-version" }, `v${b.version}`),
        h("span", { class: "muted" }, `${b.by} · ${b.at}`))))
      : h("li", { class: "muted" }, "No stored blueprints yet."))));
}

export async function blueprintView(ws, name, notice = "") {
  const { me } = await workspaces();
  const member = ["owner", "admin", "member"].includes(me.workspaces[ws]);
  const [current, { versions }] = await Promise.all([
    api("GET", `${at(ws, name)}/versions/latest`), api("GET", `${at(ws, name)}/versions`)]);
  const error = h("p", { class: "error", role: "status", "data-testid": "bp-error" });
  const choose = (label, value) => h("select", { "aria-label": label, "data-testid": `bp-${label}` },
    versions.map((v) => h("option", { value: v.version, selected: v.version === value }, `v${v.version}`)));
  const a = choose("a", Math.max(1, current.version - 1));
  const b = choose("b", current.version);
  const result = h("div", { "data-testid": "bp-diff" });
  async function compare() {
    error.textContent = "";
    try {
      const found = await api("GET", `${at(ws, name)}/diff?a=${a.value}&b=${b.value}`);
      result.replaceChildren(
        h("p", { class: "muted", "data-testid": "bp-changed" }, found.changed.length
          ? `Changed: ${found.changed.map((c) => `${c.path} (${c.change})`).join(", ")}` : "The same fields."),
        diffView(found.diff));
    } catch (failure) { error.textContent = failure.message; }
  }
  a.addEventListener("change", compare);
  b.addEventListener("change", compare);

  async function rollback(version) {
    if (!confirm(`Save version ${version} as the next version of ${name}?`)) return;
    error.textContent = "";
    try {
      const done = await api("POST", `${at(ws, name)}/rollback`, { version, expected_version: current.version });
      await blueprintView(ws, name, `Saved version ${done.version} (${done.note}).`);
    } catch (failure) { error.textContent = failure.message; }
  }
  const rows = [...versions].reverse().map((v) => h("li", { class: "bp-version", "data-testid": "bp-history-row" },
    h("span", {}, h("b", {}, `v${v.version}`), v.version === current.version ? " (current)" : "",
      v.note ? h("span", { class: "muted" }, ` ${v.note}`) : ""),
    h("span", { class: "muted" }, `${v.by} · ${v.at}`),
    member && v.version !== current.version
      ? h("button", { class: "link", "data-testid": "bp-rollback", "data-version": v.version,
        onclick: () => rollback(v.version) }, "Roll back to this") : ""));

  show(h("section", { class: "card stack" },
    h("p", {}, h("a", { href: `#/blueprints/${encodeURIComponent(ws)}` }, "← Blueprints")),
    h("h1", {}, name, " ", h("span", { class: "chip", "data-testid": "bp-current" }, `v${current.version}`)),
    h("p", { "data-testid": "bp-notice" }, notice), error,
    h("pre", { class: "block", "data-testid": "bp-fields" }, JSON.stringify(current.blueprint, null, 2))),
  h("section", { class: "card stack" }, h("h2", {}, "History"),
    h("ul", { class: "runs bp-history", "data-testid": "bp-history" }, rows)),
  h("section", { class: "card stack" }, h("h2", {}, "Diff"),
    h("div", { class: "row" }, "From", a, "to", b), result));
  if (versions.length > 1) await compare();
}
