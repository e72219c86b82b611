// Workflows: the workspace's list, and one workflow's editor. The canvas (drag nodes,
// add a step, connect two, edit a step's fields, save a new version), the same editing
// as lists and forms (the whole editor on a phone, where the canvas is hidden), the
// YAML, the history, Run, and a chat box whose agent run edits the workflow.
import { api, badge, h, session, show } from "./lib.js";
import { stepForm, stepList } from "./workflow_forms.js";
import * as doc from "./workflow_canvas.js";

const at = (name) => `/workflows/${encodeURIComponent(name)}`;
const ENDED = ["completed", "failed", "cancelled", "paused"];

export async function workflowsView() {
  const { workflows } = await api("GET", "/workflows");
  show(h("section", { class: "card stack" }, h("h1", {}, "Workflows"),
    h("p", { class: "muted" }, "Definitions of this workspace, edited on a canvas or by chat; " +
      "a run of one is a task graph. Import one with helix workflows import FILE."),
    h("ul", { class: "runs", "data-testid": "workflows" }, workflows.length
      ? workflows.map((w) => h("li", {}, h("a", { href: `#/workflows/${encodeURIComponent(w.name)}` },
        h("span", {}, h("b", {}, w.name), " ", w.description),
        h("span", { class: "chip" }, `v${w.version}`),
        h("span", { class: "muted" }, `${w.steps} steps · ${w.by} · ${w.at}`))))
      : h("li", { class: "muted" }, "No workflows yet."))));
}

export async function workflowView(name, notice = "") {
  const [read, history] = await Promise.all([
    api("GET", `${at(name)}/canvas`), api("GET", `${at(name)}/history`)]);
  const canvas = read.canvas;
  const message = h("p", { class: "error", role: "status", "data-testid": "workflow-error" });
  const saved = h("p", { "data-testid": "workflow-notice" }, notice);
  const board = h("div", { class: "wf-board", "data-testid": "wf-board" });
  const lines = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  lines.setAttribute("class", "wf-lines");
  const list = h("div", {});
  let dirty = false;
  let selected = null;
  let linking = null;
  const save = h("button", { "data-testid": "wf-save", disabled: true, onclick: async () => {
    save.disabled = true;
    try {
      const done = await api("PUT", `${at(name)}/canvas`, { canvas, base_version: read.version });
      await workflowView(name, `Saved version ${done.version}: ${done.change}.`);
    } catch (failure) {
      message.textContent = failure.status === 409
        ? `${failure.message} (your changes are not saved)` : failure.message;
      save.disabled = false;
    }
  } }, "Save");
  const changed = () => { dirty = true; save.disabled = false; draw(); };

  function draw() {
    const where = doc.placed(canvas);
    board.replaceChildren(lines, ...canvas.nodes.map((node) => nodeBox(node, where[node.id])));
    const width = Math.max(...Object.values(where).map((p) => p.x + 200), 300);
    const height = Math.max(...Object.values(where).map((p) => p.y + 90), 200);
    board.style.width = `${width}px`;
    board.style.height = `${height}px`;
    lines.setAttribute("width", width);
    lines.setAttribute("height", height);
    lines.replaceChildren(...canvas.edges.map((e) => {
      const a = where[e.from];
      const b = where[e.to];
      const line = document.createElementNS("http://www.w3.org/2000/svg", "line");
      for (const [k, v] of Object.entries({ x1: a.x + 170, y1: a.y + 30, x2: b.x, y2: b.y + 30 })) {
        line.setAttribute(k, v);
      }
      line.setAttribute("data-edge", `${e.from}->${e.to}`);
      return line;
    }));
    list.replaceChildren(stepList(canvas, { selected, select, changed, message }));
  }

  function select(id) { selected = id; draw(); }

  function nodeBox(node, place) {
    const box = h("div", {
      class: `wf-node kind-${node.step.kind || "agent"}${selected === node.id ? " selected" : ""}`,
      "data-testid": "wf-node", "data-id": node.id, tabindex: "0",
    }, h("b", {}, node.id), h("span", { class: "muted" }, node.step.objective.slice(0, 60)),
    h("button", { class: "link wf-link", "data-testid": "wf-link", title: "Connect to another step",
      onclick: (e) => { e.stopPropagation(); linking = node.id; message.textContent =
        `Click the step ${node.id} leads to.`; } }, "→"));
    box.style.left = `${place.x}px`;
    box.style.top = `${place.y}px`;
    box.addEventListener("click", () => {
      if (linking && linking !== node.id) {
        doc.connect(canvas, linking, node.id);
        linking = null;
        message.textContent = "";
        return changed();
      }
      select(node.id);
    });
    box.addEventListener("pointerdown", (down) => {
      if (down.target.closest("button")) return;
      const start = { x: down.clientX, y: down.clientY, left: place.x, top: place.y };
      let moved = false;
      const onMove = (e) => {
        const x = Math.max(0, Math.round(start.left + e.clientX - start.x));
        const y = Math.max(0, Math.round(start.top + e.clientY - start.y));
        if (Math.abs(e.clientX - start.x) + Math.abs(e.clientY - start.y) < 4 && !moved) return;
        moved = true;
        box.style.left = `${x}px`;
        box.style.top = `${y}px`;
        doc.move(canvas, node.id, x, y);
      };
      const onUp = () => {
        window.removeEventListener("pointermove", onMove);
        window.removeEventListener("pointerup", onUp);
        if (moved) changed();
      };
      window.addEventListener("pointermove", onMove);
      window.addEventListener("pointerup", onUp);
    });
    return box;
  }

  const add = stepForm(canvas, (step, after) => {
    const where = doc.placed(canvas);
    const from = after && where[after];
    const x = from ? from.x + 220 : 20;
    const y = from ? from.y + 110 : Math.max(0, ...Object.values(where).map((p) => p.y + 110));
    doc.addNode(canvas, step, x, y);
    if (after) doc.connect(canvas, after, step.id);
    selected = step.id;
    changed();
  }, message);
  draw();

  const runStatus = h("p", { "data-testid": "wf-run" });
  const runButton = h("button", { class: "secondary", "data-testid": "wf-run-start", onclick: async () => {
    try {
      const run = await api("POST", `${at(name)}/runs`, {});
      location.hash = `#/runs/${run.id}`;
    } catch (failure) { runStatus.textContent = failure.message; }
  } }, "Run");
  show(
    h("section", { class: "card stack" },
      h("div", { class: "row" }, h("h1", {}, name), h("span", { class: "chip", "data-testid": "wf-version" },
        `v${read.version}`), runButton),
      h("p", { class: "muted" }, canvas.workflow.description || ""), runStatus, saved,
      h("div", { class: "wf-scroll" }, board), h("div", { class: "row" }, save), message, list, add),
    chatBox(name, () => dirty),
    h("section", { class: "card" }, h("h2", {}, "Definition (YAML)"),
      h("pre", { class: "wf-yaml", "data-testid": "wf-yaml" }, read.text)),
    h("section", { class: "card" }, h("h2", {}, "History"),
      h("ol", { class: "timeline", "data-testid": "wf-history" }, history.versions.slice().reverse().map(
        (v) => h("li", {}, h("span", { class: "seq" }, `v${v.version}`),
          h("span", {}, h("span", { class: "type" }, `${v.how} · ${v.by}`), " ",
            h("span", { class: "muted" }, v.at), h("pre", {}, v.change)))))));
}

function chatBox(name, dirty) {
  const status = h("p", { "data-testid": "wf-chat-status", role: "status" });
  const form = h("form", { class: "card stack", "data-testid": "wf-chat" },
    h("h2", {}, "Change it by chat"),
    h("textarea", { name: "message", required: true,
      placeholder: "e.g. add a review step after tests" }),
    h("button", { type: "submit" }, "Ask"), status);
  form.addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    if (dirty() && !confirm("Your canvas changes are not saved. Ask anyway?")) return;
    const message = new FormData(form).get("message");
    try {
      const run = await api("POST", `${at(name)}/chat`, { message });
      status.replaceChildren("Working on it: ", h("a", { href: `#/runs/${run.id}` }, run.id));
      let stopped = false;
      session.closeLive = () => { stopped = true; };
      while (!stopped) {
        const now = await api("GET", `/runs/${run.id}`);
        if (ENDED.includes(now.status)) {
          if (now.status === "completed") return workflowView(name, `Edited by the chat (run ${run.id}).`);
          status.replaceChildren(badge(now.status), " The chat's run ended without an edit: ",
            h("a", { href: `#/runs/${run.id}` }, "see why"));
          return;
        }
        await new Promise((done) => setTimeout(done, 500));
      }
    } catch (failure) { status.textContent = failure.message; }
  });
  return form;
}
