// Memory: review, search, add, edit and delete memories and artifacts, the caller's own
// (personal) and a workspace's (GET/POST/PATCH/DELETE /workspaces/{w}/memory, /artifacts).
// The server decides who may do what (a viewer's write is refused with its reason, shown
// here). Texts are set with textContent only. Readable on a phone: cards, wrapping rows.
import { API, api, h, request, session, show } from "./lib.js";

const SCOPES = [["", "Both scopes"], ["personal", "Personal (mine)"], ["workspace", "Workspace (shared)"]];

function options(pairs, chosen) {
  return pairs.map(([value, label]) => h("option", { value, selected: value === chosen }, label));
}

function when(iso) { return (iso || "").replace("T", " ").slice(0, 16); }

function memoryCard(memory, base, reload) {
  const error = h("p", { class: "error", role: "status", "data-testid": "memory-error" });
  const text = h("p", { class: "memory-text", "data-testid": "memory-text" }, memory.text);
  const about = h("p", { class: "muted" }, `${memory.scope}`,
    memory.key ? ` · key ${memory.key}` : "", memory.tags.length ? ` · ${memory.tags.join(", ")}` : "",
    ` · ${memory.by} · ${when(memory.updated_at)}`);
  const card = h("li", { class: "card stack memory", "data-testid": "memory", "data-id": memory.id }, text, about);
  const editor = h("textarea", { rows: 3, "aria-label": "Memory text", "data-testid": "memory-edit-text" });
  const edit = h("button", { class: "secondary", "data-testid": "memory-edit", onclick: () => {
    editor.value = memory.text;
    text.replaceWith(editor);
    buttons.replaceChildren(save, cancel);
  } }, "Edit");
  const save = h("button", { "data-testid": "memory-save", onclick: async () => {
    try {
      await api("PATCH", `${base}/memory/${memory.id}`, { text: editor.value });
      await reload("Saved.");
    } catch (failure) { error.textContent = failure.message; }
  } }, "Save");
  const cancel = h("button", { class: "secondary", onclick: () => reload("") }, "Cancel");
  const remove = h("button", { class: "danger", "data-testid": "memory-delete", onclick: async () => {
    if (remove.dataset.armed !== "yes") {
      remove.dataset.armed = "yes";
      remove.textContent = "Delete for good?";
      return;
    }
    try {
      await api("DELETE", `${base}/memory/${memory.id}`);
      await reload("Deleted.");
    } catch (failure) { error.textContent = failure.message; }
  } }, "Delete");
  const buttons = h("div", { class: "row" }, edit, remove);
  card.append(buttons, error);
  return card;
}

async function download(base, artifact) {
  const query = new URLSearchParams({ scope: artifact.scope, version: String(artifact.version) });
  const answer = await request("GET", `${base}/artifacts/${encodeURIComponent(artifact.name)}?${query}`);
  const url = URL.createObjectURL(await answer.blob());
  const link = h("a", { href: url, download: artifact.name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

function artifactRow(artifact, base, reload) {
  const error = h("p", { class: "error", role: "status" });
  const remove = h("button", { class: "danger", "data-testid": "artifact-delete", onclick: async () => {
    try {
      await api("DELETE", `${base}/artifacts/${encodeURIComponent(artifact.name)}?scope=${artifact.scope}`);
      await reload("Deleted.");
    } catch (failure) { error.textContent = failure.message; }
  } }, "Delete");
  const get = h("button", { class: "secondary", "data-testid": "artifact-download", onclick: () =>
    download(base, artifact).catch((failure) => { error.textContent = failure.message; }) }, "Download");
  return h("li", { class: "card stack memory", "data-testid": "artifact", "data-name": artifact.name },
    h("strong", {}, artifact.name),
    h("p", { class: "muted" }, `${artifact.scope} · v${artifact.version} · ${artifact.size} bytes · ` +
      `${artifact.media_type} · ${artifact.by} · ${when(artifact.at)}`),
    h("div", { class: "row" }, get, remove), error);
}

async function upload(base, file, scope) {
  const headers = { "Content-Type": "application/octet-stream" };
  if (session.token) headers.Authorization = `Bearer ${session.token}`;
  const answer = await fetch(`${API}${base}/artifacts/${encodeURIComponent(file.name)}?scope=${scope}`,
    { method: "PUT", headers, body: file });
  if (!answer.ok) {
    const data = await answer.json().catch(() => ({}));
    throw new Error((data.error && data.error.message) || answer.statusText);
  }
}

export async function memoryView(state = {}) {
  const me = await api("GET", "/me");
  const names = Object.keys(me.workspaces || {}).sort();
  const workspace = state.workspace || (me.workspaces[me.user] === "owner" ? me.user : names[0]);
  if (!workspace) return show(h("section", { class: "card" }, h("p", {}, "You belong to no workspace.")));
  const scope = state.scope || "";
  const query = state.query || "";
  const base = `/workspaces/${encodeURIComponent(workspace)}`;
  const reload = (notice) => memoryView({ workspace, scope, query, notice });
  const params = new URLSearchParams({ limit: "200" });
  if (scope) params.set("scope", scope);
  if (query) params.set("q", query);
  let memories, artifacts;
  try {
    [memories, artifacts] = await Promise.all([
      api("GET", `${base}/memory?${params}`),
      api("GET", `${base}/artifacts${scope ? `?scope=${scope}` : ""}`),
    ]);
  } catch (failure) {
    return show(h("section", { class: "card stack" }, h("h1", {}, "Memory"),
      h("p", { class: "error", "data-testid": "memory-page-error" }, failure.message)));
  }

  const pickWorkspace = h("select", { "aria-label": "Workspace", "data-testid": "memory-workspace",
    onchange: () => memoryView({ workspace: pickWorkspace.value, scope }) },
  options(names.map((n) => [n, n]), workspace));
  const pickScope = h("select", { "aria-label": "Scope", "data-testid": "memory-scope",
    onchange: () => memoryView({ workspace, scope: pickScope.value, query }) }, options(SCOPES, scope));
  const search = h("input", { type: "search", value: query, placeholder: "Search words",
    "aria-label": "Search memories", "data-testid": "memory-search" });
  const searchForm = h("form", { class: "row" }, search, h("button", { type: "submit" }, "Search"));
  searchForm.addEventListener("submit", (submitted) => {
    submitted.preventDefault();
    memoryView({ workspace, scope, query: search.value });
  });

  const addError = h("p", { class: "error", role: "status", "data-testid": "memory-add-error" });
  const newText = h("textarea", { rows: 2, placeholder: "Something to remember", "aria-label": "New memory",
    "data-testid": "memory-new-text" });
  const newScope = h("select", { "aria-label": "New memory's scope", "data-testid": "memory-new-scope" },
    options(SCOPES.slice(1), "personal"));
  const newTags = h("input", { placeholder: "tags, comma separated", "aria-label": "Tags", "data-testid": "memory-new-tags" });
  const addForm = h("form", { class: "stack" }, newText,
    h("div", { class: "row" }, newScope, newTags, h("button", { type: "submit", "data-testid": "memory-add" }, "Remember")),
    addError);
  addForm.addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    const tags = newTags.value.split(",").map((t) => t.trim()).filter(Boolean);
    try {
      await api("POST", `${base}/memory`, { text: newText.value, scope: newScope.value, tags });
      await reload("Remembered.");
    } catch (failure) { addError.textContent = failure.message; }
  });

  const fileInput = h("input", { type: "file", "aria-label": "Artifact file", "data-testid": "artifact-file" });
  const fileScope = h("select", { "aria-label": "Artifact scope", "data-testid": "artifact-scope" },
    options(SCOPES.slice(1), "personal"));
  const uploadError = h("p", { class: "error", role: "status", "data-testid": "artifact-error" });
  const uploadForm = h("form", { class: "row" }, fileInput, fileScope,
    h("button", { type: "submit", "data-testid": "artifact-upload" }, "Upload"), uploadError);
  uploadForm.addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    if (!fileInput.files[0]) return;
    try {
      await upload(base, fileInput.files[0], fileScope.value);
      await reload("Uploaded.");
    } catch (failure) { uploadError.textContent = failure.message; }
  });

  show(h("section", { class: "card stack", "data-testid": "memory-page", "data-workspace": workspace,
    "data-scope": scope || "both" },
    h("h1", {}, "Memory"),
    h("p", { class: "muted" }, "What runs and people remember: your own (personal, nobody else sees it) " +
      "and the workspace's (its members read it; viewers cannot change it)."),
    state.notice ? h("p", { "data-testid": "memory-notice" }, state.notice) : "",
    h("div", { class: "row" }, pickWorkspace, pickScope), searchForm, addForm),
  h("section", { class: "stack" }, h("h2", {}, query ? `Memories matching “${query}”` : "Memories"),
    memories.memories.length
      ? h("ul", { class: "stack plain", "data-testid": "memory-list" },
        memories.memories.map((m) => memoryCard(m, base, reload)))
      : h("p", { class: "muted", "data-testid": "no-memories" }, query ? "Nothing matches." : "No memories yet.")),
  h("section", { class: "stack" }, h("h2", {}, "Artifacts"), uploadForm,
    artifacts.artifacts.length
      ? h("ul", { class: "stack plain", "data-testid": "artifact-list" },
        artifacts.artifacts.map((a) => artifactRow(a, base, reload)))
      : h("p", { class: "muted", "data-testid": "no-artifacts" }, "No artifacts yet.")));
}
