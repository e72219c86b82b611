"""The ``helix`` command: one Typer app, commands wired in one place.

Each command's module is imported only when that command is used, so ``helix --help``
and ``helix NAME --help`` stay fast (``helix bench cli`` measures it). To add a command,
add a ``Lazy`` row to ``COMMANDS``: its name, ``"._module:attribute"`` (a command
function, or a ``typer.Typer`` of subcommands), and the one-line summary ``helix --help``
lists (the first line of the command's docstring or ``help=``; a test checks they
agree). Give it examples in ``_examples.py``. Keep the module's own imports light: the
kernel, runtime, providers and server are imported inside the command's function.
"""

from __future__ import annotations

import typer

from helix._version import __version__

from ._examples import epilog
from ._lazy import Lazy, LazyGroup

COMMANDS = (
    Lazy(
        "demo",
        "._demo:demo",
        "Run a scripted agent end to end: writes, a denied command, an approval, done.",
    ),
    Lazy(
        "tui",
        "._tui:tui",
        "Open the terminal cockpit: runs, conversations, approvals, steering, files.",
    ),
    Lazy(
        "init",
        "._init:init",
        "Set this project up: workspace, model, sandbox tier, budget; write helix.yaml.",
    ),
    Lazy("run", "._run:run_command", "Run an agent on OBJECTIVE, in the foreground, shown live."),
    Lazy(
        "resume",
        "._run:resume",
        "Resume a paused or interrupted run; drive it here unless another process does.",
    ),
    Lazy(
        "approve",
        "._control:approve",
        "Allow a pending tool call, or answer a source's question (--answer NAME=VALUE).",
    ),
    Lazy(
        "deny",
        "._control:deny",
        "Refuse a pending tool call (or decline a question); the model is told and adapts.",
    ),
    Lazy(
        "choose",
        "._control:choose",
        "Answer an options card the agent waits on: CHOICE is an option's id or its number.",
    ),
    Lazy(
        "steer",
        "._control:steer",
        "Tell the agent something; it reads it before its next model call.",
    ),
    Lazy(
        "pause",
        "._control:pause",
        "Pause the run at its next safe point (a running tool finishes first).",
    ),
    Lazy(
        "cancel",
        "._control:cancel",
        "Cancel the run: a running command is killed and the run ends cancelled.",
    ),
    Lazy("runs", "._runs:runs", "List runs, newest first."),
    Lazy(
        "show",
        "._runs:show",
        "Show one run: status (and whether something drives it), model, counters.",
    ),
    Lazy(
        "logs",
        "._logs:logs",
        "Print a run's events; with --follow, stream them live until the run ends.",
    ),
    Lazy(
        "replay",
        "._logs:replay",
        "Show a run's session from its log, as it was shown live (nothing is run again).",
    ),
    Lazy(
        "fork",
        "._runs:fork",
        "Fork a run at a turn boundary, with its own copy of the world there, and run it.",
    ),
    Lazy("export", "._logs:export", "Write a run's whole log to stdout as JSON Lines."),
    Lazy(
        "import",
        "._logs:import_",
        "Import an exported log as a new run (checked whole before anything is written).",
    ),
    Lazy("bench", "._bench:bench", "Run a benchmark suite and print its figures."),
    Lazy(
        "files",
        "._world:files",
        "List the run's world (or print one file) as it is now or was at a turn.",
    ),
    Lazy(
        "diff",
        "._world:diff",
        "A unified diff of the run's world between two points (whole, or one path).",
    ),
    Lazy(
        "rollback",
        "._world:rollback",
        "Restore the run's world to its start or a turn's end (the log keeps a marker).",
    ),
    Lazy(
        "compare",
        "._world:compare",
        "How two branches differ: outcome, turns, cost, and a diff of their worlds.",
    ),
    Lazy(
        "keep",
        "._world:keep",
        "Promote a branch: its world becomes the original directory's content.",
    ),
    Lazy(
        "spend",
        "._spend:spend",
        "What runs' own model calls cost: in total, by model, blueprint, person etc., over time.",
    ),
    Lazy(
        "budgets",
        "._budgets:budgets_app",
        "List, set and remove budgets per workspace, blueprint and person (per day or month).",
    ),
    Lazy(
        "trace",
        "._trace:trace",
        "A run's turns, model calls, gates and tools as a waterfall, its child runs nested.",
    ),
    Lazy("schema", "._schema:schema_app", "Print machine-readable schemas."),
    Lazy("models", "._models:models_app", "List model providers and local models; recommend one."),
    Lazy(
        "doctor",
        "._doctor:doctor",
        "Check the sandbox tiers, the store, the model keys and trace export here.",
    ),
    Lazy(
        "graph",
        "._graph:graph_app",
        "Task graphs: run a plan, show its tasks, read its logs, retry a failed task.",
    ),
    Lazy("sandbox", "._sandbox:sandbox_app", "Run commands in a sandbox tier, as runs do."),
    Lazy("policy", "._policy:policy_app", "Try a policy against what runs really did."),
    Lazy(
        "plugins",
        "._plugins:plugins_app",
        "List, show, enable and disable plugins (tools, gates, components from outside).",
    ),
    Lazy(
        "workflows",
        "._workflows:workflows_app",
        "List, show, edit, import and run workflows (definitions run as task graphs).",
    ),
    Lazy(
        "blueprints",
        "._blueprints:blueprints_app",
        "List, show, save, diff and roll back stored blueprints (every save a version).",
    ),
    Lazy(
        "memory",
        "._memory:memory_app",
        "Review, search, add, edit and delete memories; export and import them.",
    ),
    Lazy(
        "artifacts",
        "._memory:artifacts_app",
        "List, get, put and delete artifacts (named files), personal or the workspace's.",
    ),
    Lazy(
        "nodes",
        "._nodes:nodes_app",
        "List the nodes runs are driven on; drain one (its runs move).",
    ),
    Lazy(
        "automations",
        "._automations:automations_app",
        "List, add, pause, resume and remove automations (cron, webhook, run event).",
    ),
    Lazy(
        "cluster",
        "._cluster:cluster_app",
        "Start, stop and inspect a local Ray cluster; write a config for an SSH pool.",
    ),
    Lazy(
        "serve",
        "._serve:serve",
        "Serve the REST and WebSocket API and the dashboard; runs are driven here.",
    ),
    Lazy(
        "mcp",
        "._mcp:mcp_app",
        "Serve Helix to MCP clients: start, follow and supervise runs from another agent.",
    ),
    Lazy(
        "login",
        "._login:login",
        "Sign in to a server; later commands talk to it (kept under HELIX_HOME).",
    ),
    Lazy(
        "status",
        "._login:status",
        "Show the server's health and the active runs (or the embedded store's).",
    ),
    Lazy("users", "._admin:users_app", "Manage users."),
    Lazy("tokens", "._admin:tokens_app", "Manage API tokens."),
    Lazy("workspaces", "._admin:workspaces_app", "Manage workspaces."),
)

app = typer.Typer(
    name="helix",
    cls=LazyGroup.of(COMMANDS),
    help="Helix: supervised agent runs whose event log is the session.",
    epilog=epilog(""),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    # Up to 120 columns when the terminal has them: summaries are not cut at 80.
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"helix {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Helix: supervised agent runs whose event log is the session."""
