// The workflow editor's lists and forms: every step with its edges and its fields
// (edit, remove, connect, disconnect) and the add-a-step form. They edit the same canvas
// document as the board, and are the whole editor on a phone.
import { h } from "./lib.js";
import * as doc from "./workflow_canvas.js";

const FIELDS = [
  ["objective", "Objective", "textarea"], ["kind", "Kind", ["agent", "approval"]],
  ["model", "Model", "text"], ["tools", "Tools (comma-separated)", "list"],
  ["retries", "Retries", "number"], ["approve", "A person approves its report", "check"],
  ["when", "Runs when (JSON: {\"step\", \"field\", \"equals\"})", "json"],
];

function input(name, type, value) {
  if (Array.isArray(type)) {
    return h("select", { name }, type.map((o) => h("option", { value: o, selected: (value || "agent") === o }, o)));
  }
  if (type === "textarea") return h("textarea", { name }, value || "");
  if (type === "check") return h("input", { name, type: "checkbox", checked: !!value, style: "width:auto" });
  const shown = type === "list" ? (value || []).join(", ") : type === "json" ? (value ? JSON.stringify(value) : "") : value ?? "";
  return h("input", { name, type: type === "number" ? "number" : "text", value: shown });
}

function read(form, name, type) {
  const el = form.elements[name];
  if (type === "check") return el.checked || null;
  const text = el.value.trim();
  if (!text) return null;
  if (type === "number") return Number(text);
  if (type === "list") return text.split(",").map((s) => s.trim()).filter(Boolean);
  if (type === "json") return JSON.parse(text);
  return text;
}

function editor(canvas, node, changed, message) {
  const form = h("form", { class: "stack wf-edit", "data-testid": "wf-step-form" },
    FIELDS.map(([name, label, type]) => h("label", { class: "stack" }, h("span", { class: "muted" }, label),
      input(name, type, node.step[name]))),
    h("div", { class: "row" }, h("button", { type: "submit", "data-testid": "wf-apply" }, "Apply"),
      h("button", { type: "button", class: "danger", "data-testid": "wf-remove", onclick: () => {
        doc.removeNode(canvas, node.id);
        changed();
      } }, "Remove step")));
  form.addEventListener("submit", (submitted) => {
    submitted.preventDefault();
    try {
      for (const [name, , type] of FIELDS) doc.setField(canvas, node.id, name, read(form, name, type));
      message.textContent = "";
      changed();
    } catch (failure) { message.textContent = `Not applied: ${failure.message}`; }
  });
  return form;
}

export function stepList(canvas, { selected, select, changed, message }) {
  const ids = canvas.nodes.map((n) => n.id);
  return h("ul", { class: "wf-steps", "data-testid": "wf-steps" }, canvas.nodes.map((node) => {
    const out = canvas.edges.filter((e) => e.from === node.id);
    const target = h("select", { "aria-label": `Connect ${node.id} to`, "data-testid": "wf-connect-to" },
      h("option", { value: "" }, "connect to…"), ids.filter((i) => i !== node.id).map((i) => h("option", { value: i }, i)));
    target.addEventListener("change", () => { if (target.value) { doc.connect(canvas, node.id, target.value); changed(); } });
    return h("li", { "data-testid": "wf-step", "data-id": node.id },
      h("div", { class: "row" }, h("button", { class: "link", onclick: () => select(selected === node.id ? null : node.id) },
        h("b", {}, node.id)), h("span", { class: "chip" }, node.step.kind || "agent"),
        node.step.when ? h("span", { class: "chip" }, "branch") : "",
        h("span", { class: "muted wf-objective" }, node.step.objective)),
      h("div", { class: "row" }, out.map((e) => h("span", { class: "chip", "data-testid": "wf-edge" }, `→ ${e.to} `,
        h("button", { class: "link", "aria-label": `Disconnect ${e.from} from ${e.to}`, onclick: () => {
          doc.disconnect(canvas, e.from, e.to); changed(); } }, "×"))), target),
      selected === node.id ? editor(canvas, node, changed, message) : "");
  }));
}

export function stepForm(canvas, added, message) {
  const form = h("form", { class: "stack wf-add", "data-testid": "wf-add" }, h("h2", {}, "Add a step"),
    h("div", { class: "row" },
      h("input", { name: "id", placeholder: "id, e.g. review", required: true, pattern: "[A-Za-z0-9][A-Za-z0-9_\\-]{0,63}" }),
      h("select", { name: "kind" }, h("option", { value: "agent" }, "agent"), h("option", { value: "approval" }, "approval")),
      h("select", { name: "after", "aria-label": "After" }, h("option", { value: "" }, "after…"),
        canvas.nodes.map((n) => h("option", { value: n.id }, n.id)))),
    h("textarea", { name: "objective", placeholder: "What the step does", required: true }),
    h("button", { type: "submit", "data-testid": "wf-add-step" }, "Add step"));
  form.addEventListener("submit", (submitted) => {
    submitted.preventDefault();
    const data = new FormData(form);
    const id = data.get("id").trim();
    if (canvas.nodes.some((n) => n.id === id)) { message.textContent = `There is a step ${id} already.`; return; }
    const step = { id, objective: data.get("objective").trim() };
    if (data.get("kind") === "approval") step.kind = "approval";
    added(step, data.get("after") || null);
  });
  return form;
}
