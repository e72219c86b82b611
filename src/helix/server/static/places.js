// Where a new run works and what it runs: the workspace, a folder of its worlds, a blueprint.
import { api, h } from "./lib.js";

const NEW_NAMED = "+";

export async function placePicker(form) {
  const me = await api("GET", "/me");
  const names = Object.keys(me.workspaces).sort();
  const initial = me.workspaces[me.user] === "owner" ? me.user : names[0];
  const workspace = h("select", { name: "workspace", "aria-label": "Workspace", hidden: names.length < 2 },
    names.map((n) => h("option", { value: n, selected: n === initial }, n)));
  const folder = h("select", { name: "world", "aria-label": "Folder", "data-testid": "folder" });
  const named = h("input", { name: "new_world", placeholder: "New folder name", "aria-label": "New folder name",
    pattern: "[A-Za-z0-9][A-Za-z0-9_.\\-]{0,63}", title: "letters, digits, _ . - (no slashes)", hidden: true });
  const blueprint = h("select", { name: "blueprint", "aria-label": "Blueprint", "data-testid": "blueprint" });
  const model = form.elements.model;

  async function load() {
    const at = encodeURIComponent(workspace.value);
    const [{ worlds }, { blueprints }] = await Promise.all([
      api("GET", `/workspaces/${at}/worlds`), api("GET", `/workspaces/${at}/blueprints`)]);
    folder.replaceChildren(h("option", { value: "" }, "A new empty folder"),
      h("option", { value: NEW_NAMED }, "A new folder named…"),
      ...worlds.map((n) => h("option", { value: n }, `Folder ${n}`)));
    blueprint.replaceChildren(h("option", { value: "" }, "No blueprint"),
      ...blueprints.map((n) => h("option", { value: n }, `Blueprint ${n}`)));
    changed();
  }
  function changed() {
    named.hidden = folder.value !== NEW_NAMED;
    named.required = !named.hidden;
    if (model) model.required = !blueprint.value;  // a blueprint may name its own model
  }
  workspace.addEventListener("change", load);
  folder.addEventListener("change", changed);
  blueprint.addEventListener("change", changed);
  await load();

  return {
    fields: h("div", { class: "row places" }, workspace, folder, named, blueprint),
    // The chosen place and blueprint, onto a POST /runs body.
    apply(body) {
      body.workspace = workspace.value;
      const world = folder.value === NEW_NAMED ? named.value.trim() : folder.value;
      if (world) body.world = world;
      if (blueprint.value) body.blueprint = blueprint.value;
      if (!body.model) delete body.model;
      return body;
    },
  };
}
