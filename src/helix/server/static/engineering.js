// The engineering pack's components (helix.packs.engineering): a test run's results and a
// delivered diff. Built as DOM nodes with textContent (lib.js's h), never as markup; long
// lines wrap, so both read on a phone.
import { h } from "./lib.js";

const text = (value) => (value == null ? "" : String(value));

function where(failure) {
  if (!failure.file) return "";
  return failure.line == null ? failure.file : `${failure.file}:${failure.line}`;
}

// engineering.test_results: a pass/fail badge with the counts, then one card per failure.
export function testResults(props) {
  const green = Boolean(props.green);
  const counts = ["passed", "failed", "errors", "skipped"].map((key) =>
    h("span", { class: `eng-count eng-${key}`, "data-testid": `eng-${key}` }, `${text(props[key] ?? 0)} ${key}`));
  const failures = (props.failures || []).map((failure) => h("details", { class: "eng-failure", "data-testid": "eng-failure" },
    h("summary", {}, h("b", {}, text(failure.test_id)), " ", h("span", { class: "muted" }, where(failure))),
    failure.message ? h("p", { class: "eng-message" }, text(failure.message)) : null,
    failure.traceback ? h("pre", { class: "eng-traceback" }, text(failure.traceback)) : null));
  const notes = (props.notes || []).map((note) => h("p", { class: "muted" }, text(note)));
  return h("div", { class: "eng-tests", "data-testid": "eng-tests" },
    h("p", { class: `eng-verdict ${green ? "ok" : "bad"}`, "data-testid": "eng-verdict" }, green ? "PASS" : "FAIL", " ", counts),
    failures, notes);
}

// engineering.diff: branch and commit, a file list with +/- counts, then the diff.
export function engDiff(props) {
  const head = props.branch
    ? h("p", { class: "eng-branch" }, h("b", {}, text(props.branch)), " @ ", h("code", {}, text(props.commit).slice(0, 12)),
      props.remote ? h("span", { class: "muted" }, ` → ${text(props.remote)}`) : null)
    : null;
  const files = h("ul", { class: "eng-files", "data-testid": "eng-files" }, (props.files || []).map((file) => h("li", {},
    h("code", {}, text(file.path)), " ",
    file.added == null ? h("span", { class: "muted" }, "binary")
      : [h("span", { class: "add" }, `+${file.added}`), " ", h("span", { class: "del" }, `-${file.removed}`)])));
  const lines = String(props.diff || "").replace(/\n$/, "").split("\n");
  const diff = h("details", {}, h("summary", {}, "Diff"), h("pre", { class: "diff", "data-testid": "eng-diff" }, lines.map((line) => h("span", {
    class: line.startsWith("+") && !line.startsWith("+++") ? "add"
      : line.startsWith("-") && !line.startsWith("---") ? "del" : line.startsWith("@@") ? "hunk" : "" }, `${line}\n`))));
  const summary = props.summary ? h("details", {}, h("summary", {}, "Review summary"), h("pre", { class: "eng-traceback" }, text(props.summary))) : null;
  return h("div", { class: "eng-diff" }, head, files, summary, diff);
}
