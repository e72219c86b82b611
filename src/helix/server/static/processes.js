// A run's live world (sandbox.live): its background processes, read from its log.
// The list is fetched once, then again after each world.* event the stream brings.

const STATES = {
  running: "running", exited: "exited", stopped: "stopped", world_stopped: "killed",
};

function state(process, image) {
  if (process.running) return image ? "frozen" : STATES.running;
  const how = STATES[process.ended] || "ended";
  return process.exit_code === null || process.exit_code === undefined ? how : `${how} ${process.exit_code}`;
}

export function processesView(runId, { h, api }) {
  const list = h("ul", { class: "files processes", "data-testid": "processes" });
  const note = h("p", { class: "muted", "data-testid": "processes-note" });
  const error = h("p", { class: "error" });
  async function load() {
    try {
      const live = await api("GET", `/runs/${runId}/processes`);
      list.replaceChildren(...live.processes.map((p) => h("li", { "data-testid": `process-${p.process}` },
        h("b", {}, p.process), " ",
        h("span", { class: `badge ${p.running ? "running" : "completed"}` }, state(p, live.image)), " ",
        h("code", { class: "wrap" }, p.command),
        p.turn === null ? null : h("span", { class: "muted" }, ` · turn ${p.turn}`))));
      note.textContent = live.image
        ? `Checkpointed (${live.tier}): restored with its processes when the run goes on.`
        : live.processes.length ? "" : "No background process: run_command with background: true starts one.";
      error.textContent = "";
    } catch (failure) { error.textContent = failure.message; }
  }
  let pending = null;
  function add(event) {
    if (!String(event.type).startsWith("world.")) return;
    clearTimeout(pending);
    pending = setTimeout(load, 100);
  }
  load();
  return { label: "Processes", el: h("div", { class: "card stack" }, note, list, error), add };
}
