// The Helix dashboard: routes a hash to its page. Plain ES modules, no build step.
import { api, h, session, show, signIn, signOut } from "./lib.js";
import { linkHelp, passwordCard } from "./account.js";
import { automationsView } from "./automations.js";
import { budgetsView } from "./budgets.js";
import { blueprintView, blueprintsView } from "./blueprints.js";
import { compareView } from "./compare.js";
import { loginView } from "./login.js";
import { memoryView } from "./memory.js";
import { playerView } from "./player.js";
import { nodesView } from "./nodes.js";
import { pluginsView } from "./plugins.js";
import { runView } from "./run.js";
import { runsView } from "./runs.js";
import { spendView } from "./spend.js";
import { traceView } from "./trace.js";
import { workflowView, workflowsView } from "./workflows.js";

// One page is drawn at a time, and only the newest hash is drawn: a page still loading when
// the hash changes finishes first (its socket closed by the next), and the hashes passed
// over meanwhile are skipped, so a slow page never paints over a newer one.
let drawing = Promise.resolve();
let wanted = 0;
function route() {
  const mine = ++wanted;
  drawing = drawing.then(() => (mine === wanted ? draw() : undefined)).catch(() => {});
  return drawing;
}

async function draw() {
  session.closeLive();
  session.closeLive = () => {};
  const hash = location.hash || "#/";
  if (hash.startsWith("#login=")) {
    try {
      const answer = await api("POST", "/auth/link", { token: hash.slice("#login=".length) });
      return signIn(answer.token);
    } catch (failure) {
      loginView();
      return document.getElementById("view").prepend(linkHelp(failure.message));
    }
  }
  if (!session.token) return loginView();
  try {
    const me = await api("GET", "/me");
    document.getElementById("who").textContent = me.user;
    document.getElementById("logout").hidden = false;
    // Nodes are the server's: its team workspaces' owners and admins see them.
    document.getElementById("nav-nodes").hidden = !Object.entries(me.workspaces || {}).some(
      ([name, role]) => (role === "owner" || role === "admin") && name !== me.user);
    const traced = hash.match(/^#\/runs\/([A-Za-z0-9_-]+)\/trace/);
    const match = hash.match(/^#\/runs\/([A-Za-z0-9_-]+)/);
    const compare = hash.match(/^#\/compare\/([A-Za-z0-9_-]+)\/([A-Za-z0-9_-]+)/);
    const play = hash.match(/^#\/play\/([A-Za-z0-9_-]+)(?:\/(\d+))?/);
    const workflow = hash.match(/^#\/workflows\/([^/?]+)/);
    const blueprint = hash.match(/^#\/blueprints(?:\/([^/?]+))?(?:\/([^/?]+))?/);
    if (traced) await traceView(traced[1]);
    else if (hash.startsWith("#/spend")) await spendView();
    else if (hash.startsWith("#/budgets")) await budgetsView();
    else if (hash.startsWith("#/plugins")) await pluginsView();
    else if (hash.startsWith("#/nodes")) await nodesView();
    else if (hash.startsWith("#/automations")) await automationsView();
    else if (hash.startsWith("#/memory")) await memoryView();
    else if (workflow) await workflowView(decodeURIComponent(workflow[1]));
    else if (blueprint && blueprint[2]) {
      await blueprintView(decodeURIComponent(blueprint[1]), decodeURIComponent(blueprint[2]));
    } else if (blueprint) await blueprintsView(blueprint[1] && decodeURIComponent(blueprint[1]));
    else if (hash.startsWith("#/workflows")) await workflowsView();
    else if (match) await runView(match[1]);
    else if (compare) await compareView(compare[1], compare[2]);
    else if (play) await playerView(play[1], play[2]);
    else await runsView();
    if (!me.password && !match) document.getElementById("view").prepend(passwordCard());
  } catch (failure) {
    if (session.token) show(h("p", { class: "error" }, failure.message));
  }
}

document.getElementById("logout").addEventListener("click", signOut);
window.addEventListener("hashchange", route);
route();
