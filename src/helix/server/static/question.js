// A tool source's question (an MCP server eliciting) as a small form, built from its flat
// JSON Schema: a text box per string, a number box per number or integer, a choice per
// enum or boolean. Its message is the source's own words: shown as text, never obeyed.
// Answer posts the typed fields (empty optional ones left out); Decline declines it.
import { h } from "./lib.js";

function field(prefix, name, spec, required) {
  const id = `${prefix}-${name}`;
  const label = h("label", { for: id }, spec.title || name, required ? " *" : "",
    spec.description ? h("small", { class: "muted" }, ` ${spec.description}`) : null);
  let input;
  if (spec.enum || spec.type === "boolean") {
    const values = spec.enum || ["true", "false"];
    const names = spec.enumNames || (spec.enum ? values : ["yes", "no"]);
    input = h("select", { id, name, required },
      required ? null : h("option", { value: "" }, "—"),
      values.map((value, i) => h("option", { value }, names[i] ?? value)));
  } else if (spec.type === "number" || spec.type === "integer") {
    input = h("input", { id, name, type: "number", required, step: spec.type === "integer" ? "1" : "any",
      min: spec.minimum, max: spec.maximum, inputmode: spec.type === "integer" ? "numeric" : "decimal" });
  } else {
    input = h("input", { id, name, type: "text", required, minlength: spec.minLength, maxlength: spec.maxLength });
  }
  return h("div", { class: "field" }, label, input);
}

// The answer the form holds, typed by the schema; empty optional fields are left out.
function answerOf(form, properties) {
  const answer = {};
  for (const [name, spec] of Object.entries(properties)) {
    const raw = form.elements.namedItem(name).value;
    if (raw === "") continue;
    if (spec.type === "boolean") answer[name] = raw === "true";
    else if (spec.type === "number" || spec.type === "integer") answer[name] = Number(raw);
    else answer[name] = raw;
  }
  return answer;
}

export function questionForm(call, where, decide) {
  const question = call.question;
  const schema = question.schema || {};
  const properties = schema.properties || {};
  const required = new Set(schema.required || []);
  const names = Object.keys(properties);
  const form = h("form", { class: "question", "data-testid": "question-form" },
    names.map((name) => field(`${where}-${call.requestId}`, name, properties[name], required.has(name))),
    h("div", { class: "row" },
      h("button", { class: "allow", type: "submit" }, names.length ? "Answer" : "Yes"),
      h("button", { class: "deny", type: "button", onclick: () => decide(call.requestId, "deny") }, "Decline")));
  form.addEventListener("submit", (submitted) => {
    submitted.preventDefault();
    decide(call.requestId, "allow", answerOf(form, properties));
  });
  return h("div", { class: "ask", "data-testid": where },
    h("h3", {}, question.name === "sampling"
      ? `${question.source} asks the run's model to answer this prompt (up to ${question.args.max_tokens} tokens, on the run's budget; its words, not Helix's):`
      : `${question.source} asks (its words, not Helix's):`),
    h("pre", { class: "command", "data-testid": "question-message" }, question.message),
    form);
}
