// "What would this policy have done?": a run's logged calls judged by a candidate policy.
// The server judges (POST /runs/{id}/policy-replay); nothing runs and nothing is logged.
const EXAMPLE = "policy: {deny_tools: [run_command]}\napprovals:\n  rules: [{tool: write_file, action: ask}]";
const FORMATS = { yaml: "yaml", yml: "yaml", toml: "toml", json: "json" };

function logged(call) {
  let text = call.logged;
  const a = call.approval;
  if (a) text += a.decision == null ? " → unanswered" : ` → ${a.decision === "allow" ? "allowed" : "denied"} by ${a.auto ? "auto" : a.by}`;
  return text + (call.ran ? ", ran" : ", did not run");
}

// The view's section, built with the dashboard's own helpers (h: elements, api: calls).
export function policyReplay(runId, { h, api }) {
  const text = h("textarea", { name: "policy", rows: 5, placeholder: EXAMPLE, spellcheck: "false",
    "aria-label": "Candidate policy", "data-testid": "policy-text" });
  const format = h("select", { name: "format", "aria-label": "Format" },
    ["yaml", "toml", "json"].map((f) => h("option", { value: f }, f)));
  const upload = h("input", { type: "file", accept: ".yaml,.yml,.toml,.json", "aria-label": "Policy file",
    "data-testid": "policy-file", onchange: async () => {
      const file = upload.files[0];
      if (!file) return;
      text.value = await file.text();
      format.value = FORMATS[file.name.split(".").pop().toLowerCase()] || "yaml";
    } });
  const error = h("p", { class: "error", "data-testid": "policy-error" });
  const out = h("div", { class: "stack", "data-testid": "policy-result" });

  async function replay(submitted) {
    submitted.preventDefault();
    error.textContent = "";
    out.replaceChildren();
    try {
      const report = await api("POST", `/runs/${runId}/policy-replay`,
        { text: text.value || EXAMPLE, format: format.value });
      const summary = `${report.calls} calls judged: ${report.stricter} stricter, ${report.looser} looser` +
        (report.unjudged.length ? `, ${report.unjudged.length} not judged` : "");
      out.replaceChildren(h("p", { "data-testid": "policy-summary" }, summary),
        report.differences.length ? h("ol", { class: "replay" }, ...report.differences.map((c) =>
          h("li", { class: c.change, "data-testid": "policy-difference" },
            h("div", {}, h("b", {}, c.tool), h("span", { class: "muted" }, ` #${c.seq} · turn ${c.turn ?? "–"} · ${c.change}`)),
            h("div", {}, "Logged: ", h("span", { class: `verdict-${c.logged}` }, logged(c))),
            h("div", {}, "Would: ", h("span", { class: `verdict-${c.candidate}` },
              c.candidate + (c.candidate_gate ? ` (${c.candidate_gate})` : "")), ` — ${c.candidate_reason}`),
            h("pre", {}, JSON.stringify(c.args, null, 2)))))
          : h("p", { class: "muted" }, "No logged call would have been decided differently."),
        ...report.unjudged.map((u) => h("p", { class: "muted" }, `#${u.seq} ${u.tool}: not judged: ${u.reason}`)));
    } catch (failure) { error.textContent = failure.message; }
  }

  const form = h("form", { class: "stack", "data-testid": "policy-replay" }, text,
    h("div", { class: "row" }, format, upload, h("button", { type: "submit" }, "Replay")), error);
  form.addEventListener("submit", replay);
  return h("section", { class: "card stack" }, h("h2", {}, "What would this policy have done?"),
    h("p", { class: "muted" }, "Paste or upload a policy (a blueprint's policy, approvals, sandbox " +
      "network/deny or budget sections). The run's calls are judged again; nothing runs."),
    form, out);
}
