// Plugins: what this server's runs may name in a blueprint, each with its version, whether
// it is active (and why not), and what it provides. GET /plugins; read-only here
// (`helix plugins enable|disable` on the server's machine turns one on or off).
import { api, h, show } from "./lib.js";

const STATUS = { active: "completed", inactive: "paused", failed: "failed", disabled: "cancelled" };

function card(plugin) {
  const provided = Object.entries(plugin.provides || {});
  return h("li", { class: "card stack", "data-testid": "plugin", "data-name": plugin.name },
    h("div", { class: "row" },
      h("strong", {}, plugin.name),
      h("span", { class: "muted" }, plugin.version || "not loaded"),
      h("span", { class: `status ${STATUS[plugin.status] || ""}`, "data-testid": "plugin-status" }, plugin.status),
      h("span", { class: "muted" }, plugin.source === "folder" ? "folder" : "installed")),
    plugin.reason ? h("p", { class: plugin.status === "active" ? "muted" : "error",
      "data-testid": "plugin-reason" }, plugin.reason) : "",
    plugin.requires.length ? h("p", { class: "muted" }, `needs ${plugin.requires.join(", ")}`) : "",
    provided.length ? h("p", { "data-testid": "plugin-provides" },
      provided.map(([kind, names]) => `${kind}: ${names.join(", ")}`).join(" · ")) : "");
}

export async function pluginsView() {
  const answer = await api("GET", "/plugins");
  const list = h("ul", { class: "plugins stack", "data-testid": "plugin-list" }, answer.plugins.map(card));
  show(h("section", { class: "stack" },
    h("h1", {}, "Plugins"),
    h("p", { class: "muted" }, "Name a plugin in a blueprint's plugins to give its runs the plugin's tools and gates."),
    answer.plugins.length ? list : h("p", { class: "muted", "data-testid": "no-plugins" },
      "No plugins are installed on this server.")));
}
