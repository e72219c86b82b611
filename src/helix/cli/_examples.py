"""Examples every command's help ends with: real invocations, keyed by command path.

``helix users add --help`` ends with ``EXAMPLES["users add"]``; ``""`` is ``helix``
itself. A command added to ``_app.py`` gets its examples here (a test checks that
every command's help has some).
"""

from __future__ import annotations

RUN = "run_4488dcc2f1db44be9ce9"
"""An id as ``helix run`` prints it (shown in examples)."""
FORK = "run_91c0e2a7b3d54f6a8e10"

EXAMPLES: dict[str, tuple[str, ...]] = {
    "": (
        "helix demo",
        "helix run 'add a --verbose flag to cli.py' --model openai:gpt-4.1",
        "helix runs",
        "helix run --help",
    ),
    "demo": ("helix demo", "HELIX_HOME=/tmp/helix-try helix demo"),
    "tui": ("helix tui", "HELIX_SERVER=https://helix.example.org HELIX_TOKEN=hx_… helix tui"),
    "init": (
        "helix init",
        "helix init --model openai:gpt-4.1 --tier bwrap --budget 2 --yes",
        "helix init --model llamacpp --base-url http://127.0.0.1:8080/v1 --yes",
    ),
    "run": (
        "helix run 'fix the failing test in tests/test_api.py' --model openai:gpt-4.1",
        "helix run 'tidy the README' --model ollama:qwen2.5-coder:7b --dir ~/src/app",
        "helix run 'upgrade the deps' --blueprint agent.yaml --budget 2 --detach",
        "helix run 'list the TODOs' --model anthropic:claude-sonnet-4-5 --json",
    ),
    "resume": (
        f"helix resume {RUN}",
        f"helix resume {RUN} --budget 5",
        f"helix resume {RUN} --budget-tokens 2000000",
        f"helix resume {RUN} --max-turns 80 --wait",
    ),
    "approve": (
        f"helix approve {RUN}",
        f"helix approve {RUN} req_3 --reason 'looks safe'",
        f"helix approve {RUN} apr_3 --answer name=Ada --answer age=36",
        f'helix approve {RUN} apr_3 --answer-json \'{{"name": "Ada", "tea": true}}\'',
    ),
    "deny": (f"helix deny {RUN}", f"helix deny {RUN} req_3 --reason 'not on main'"),
    "choose": (f"helix choose {RUN} 2", f"helix choose {RUN} cmp_5f2a postgres"),
    "steer": (f"helix steer {RUN} 'use pytest, not unittest'",),
    "pause": (f"helix pause {RUN}",),
    "cancel": (f"helix cancel {RUN}",),
    "runs": ("helix runs", "helix runs --status running --limit 5", "helix runs --json"),
    "show": (f"helix show {RUN}", f"helix show {RUN} --json"),
    "logs": (f"helix logs {RUN}", f"helix logs {RUN} --follow", f"helix logs {RUN} --json"),
    "replay": (f"helix replay {RUN}", f"helix replay {RUN} --to 12 --json"),
    "fork": (
        f"helix fork {RUN} --turn 1 --message 'try a smaller change'",
        f"helix fork {RUN} --turn 0 --model anthropic:claude-sonnet-4-5 --detach",
    ),
    "export": (f"helix export {RUN} > run.jsonl",),
    "import": ("helix import run.jsonl", "helix import run.jsonl --as run_copy --json"),
    "bench": (
        "helix bench cli",
        "helix bench eventlog --no-postgres --json",
        "helix bench engine --quick",
    ),
    "files": (
        f"helix files {RUN}",
        f"helix files {RUN} --turn 2",
        f"helix files {RUN} notes/todo.md --turn start",
    ),
    "diff": (f"helix diff {RUN}", f"helix diff {RUN} README.md --from 1 --to now"),
    "rollback": (f"helix rollback {RUN}", f"helix rollback {RUN} --to 2"),
    "compare": (f"helix compare {RUN} {FORK}", f"helix compare {RUN} {FORK} --json"),
    "keep": (f"helix keep {FORK}", f"helix keep {FORK} --yes"),
    "spend": (
        "helix spend",
        "helix spend --by person --since 7d",
        "helix spend --by provider --bucket day --json",
        "helix spend --workspace team --model openai:gpt-4.1",
    ),
    "trace": (f"helix trace {RUN}", f"helix trace {RUN} --json"),
    "schema": ("helix schema events > events.schema.json",),
    "schema events": ("helix schema events > events.schema.json",),
    "models": ("helix models", "helix models --json", "helix models recommend"),
    "models recommend": ("helix models recommend", "helix models recommend --json"),
    "doctor": ("helix doctor", "helix doctor --json"),
    "plugins": (
        "helix plugins list",
        "helix plugins info example",
        "helix plugins disable example",
    ),
    "plugins list": ("helix plugins list", "helix plugins list --json"),
    "plugins info": ("helix plugins info example", "helix plugins info example --json"),
    "plugins enable": ("helix plugins enable example",),
    "plugins disable": ("helix plugins disable example",),
    "sandbox": ("helix sandbox run -- ls -la",),
    "sandbox run": (
        "helix sandbox run -- ls -la",
        "helix sandbox run --tier bwrap --dir ./app -- pytest -q",
        "helix sandbox run --network api.github.com -- curl -sI https://api.github.com",
    ),
    "policy": (f"helix policy replay {RUN} --policy stricter.yaml",),
    "policy replay": (
        f"helix policy replay {RUN} --policy stricter.yaml",
        "helix policy replay --workspace default --policy stricter.yaml --json",
    ),
    "serve": (
        "helix serve",
        "helix serve --host 0.0.0.0 --port 8420 --public-url https://helix.example.com",
        "helix serve --no-resume",
        "HELIX_OTEL_ENDPOINT=http://127.0.0.1:4318 helix serve",
        "helix serve --executor processes --workers 4",
        "HELIX_EXECUTOR=local helix serve",
        "HELIX_RAY_TOKEN=$TOKEN helix serve --executor ray --ray-address 10.0.0.5:6379",
    ),
    "graph": (
        "helix graph run plan.yaml",
        f"helix graph show {RUN}",
        f"helix graph retry {RUN} clean",
    ),
    "graph run": (
        "helix graph run plan.yaml",
        "helix graph run plan.yaml --world ~/src/data --budget 5",
        "helix graph run plan.yaml --detach --json",
    ),
    "graph show": (f"helix graph show {RUN}", "helix graph show last --json"),
    "graph logs": (f"helix graph logs {RUN}", f"helix graph logs {RUN} --follow --json"),
    "graph retry": (f"helix graph retry {RUN} clean", f"helix graph retry {RUN} clean --detach"),
    "graph cancel": (f"helix graph cancel {RUN}",),
    "budgets": (
        "helix budgets list",
        "helix budgets set --workspace team --period month --usd 50",
        "helix budgets set --person ann --period day --tokens 2000000",
    ),
    "budgets list": ("helix budgets list", "helix budgets list --workspace team --json"),
    "budgets set": (
        "helix budgets set --workspace team --usd 50",
        "helix budgets set --blueprint coder --period day --usd 5 --tokens 1000000",
    ),
    "budgets remove": (
        "helix budgets remove --workspace team",
        "helix budgets remove --person ann --period day",
    ),
    "automations": (
        "helix automations list",
        "helix automations add nightly --cron '0 3 * * *' -b tidy -o 'tidy the docs'",
        "helix automations pause aut_3f9a0c1b2d4e5f60",
    ),
    "automations list": (
        "helix automations list",
        "helix automations list --workspace team --json",
    ),
    "automations add": (
        "helix automations add nightly --cron '0 3 * * *' -b tidy -o 'tidy the docs'",
        "helix automations add deploy --webhook --blueprint release --objective 'ship main'",
        "helix automations add triage --on run.failed --blueprint triage --objective 'find why'",
        "helix automations add hourly --cron '0 * * * *' --missed skip -b check -o 'check links'",
    ),
    "automations pause": ("helix automations pause aut_3f9a0c1b2d4e5f60",),
    "automations resume": ("helix automations resume aut_3f9a0c1b2d4e5f60",),
    "automations remove": ("helix automations remove aut_3f9a0c1b2d4e5f60",),
    "nodes": ("helix nodes", "helix nodes --json", "helix nodes drain worker-2"),
    "nodes drain": ("helix nodes drain worker-2", "helix nodes drain 8f3c1e0a… --json"),
    "cluster": (
        "helix cluster up --nodes 2 --label gpu=true",
        "helix cluster status",
        "helix cluster down",
    ),
    "cluster up": (
        "helix cluster up",
        "helix cluster up --nodes 2 --cpus 4 --label zone=a --label gpu=true",
    ),
    "cluster status": ("helix cluster status", "helix cluster status --json"),
    "cluster down": ("helix cluster down",),
    "cluster config": (
        "helix cluster config --ssh 10.0.0.5,10.0.0.6,10.0.0.7 --user ops --key ~/.ssh/pool",
        "helix cluster config --ssh gpu1.lan,gpu2.lan --head gpu1.lan --out cluster.yaml",
    ),
    "mcp": ("helix mcp serve", "helix mcp serve --http 8765 --token-file ~/.helix-mcp-token"),
    "mcp serve": (
        "helix mcp serve",
        "helix mcp serve --allow-approvals",
        "HELIX_MCP_TOKEN=$(cat ~/.helix-mcp-token) helix mcp serve --http 8765",
        "helix mcp serve --http 0 --no-auth",
    ),
    "login": (
        "helix login http://127.0.0.1:8420 --user alice",
        "printf '%s' \"$HELIX_TOKEN\" | helix login https://helix.example.com --token-stdin",
    ),
    "status": ("helix status",),
    "users": ("helix users add alice --workspace team --role admin",),
    "users add": (
        "helix users add alice",
        "printf '%s' \"$PW\" | helix users add bob --workspace team --password-stdin",
    ),
    "users remove": ("helix users remove bob",),
    "users passwd": (
        "printf '%s' \"$PW\" | helix users passwd alice --password-stdin",
        "helix users passwd alice --remove",
    ),
    "tokens": ("helix tokens create --user alice",),
    "tokens create": ("helix tokens create --user alice",),
    "tokens revoke": (
        "printf '%s' \"$TOKEN\" | helix tokens revoke",
        "helix tokens revoke --user alice",
    ),
    "blueprints": ("helix blueprints list", "helix blueprints save reviewer reviewer.yaml"),
    "blueprints list": ("helix blueprints list", "helix blueprints list --workspace team --json"),
    "blueprints show": (
        "helix blueprints show reviewer",
        "helix blueprints show reviewer --version 2",
    ),
    "blueprints save": (
        "helix blueprints save reviewer reviewer.yaml --note 'stricter review'",
        "helix blueprints save reviewer reviewer.yaml --expected-version 3",
    ),
    "blueprints history": ("helix blueprints history reviewer",),
    "blueprints diff": (
        "helix blueprints diff reviewer 1 3",
        "helix blueprints diff reviewer 2 3 --json",
    ),
    "blueprints rollback": ("helix blueprints rollback reviewer 2",),
    "memory": (
        "helix memory search deploy",
        "helix memory add 'Deploys go out on Tuesdays' --scope workspace --tag deploy",
    ),
    "memory list": ("helix memory list", "helix memory list --scope workspace --json"),
    "memory search": ("helix memory search deploy", "helix memory search 'release notes' --json"),
    "memory add": (
        "helix memory add 'I prefer short commit messages'",
        "helix memory add 'Deploys go out on Tuesdays' --scope workspace --tag deploy",
    ),
    "memory edit": (
        "helix memory edit mem_3f9a0c1b2d4e5f60 --text 'Deploys go out on Wednesdays'",
        "helix memory edit mem_3f9a0c1b2d4e5f60 --tag ops --tag deploy",
    ),
    "memory rm": ("helix memory rm mem_3f9a0c1b2d4e5f60",),
    "memory export": (
        "helix memory export --workspace team -o team-memory.jsonl",
        "helix memory export --workspace team --personal > all.jsonl",
    ),
    "memory import": ("helix memory import team-memory.jsonl --workspace team",),
    "artifacts": ("helix artifacts list", "helix artifacts put plan.md --scope workspace"),
    "artifacts list": ("helix artifacts list", "helix artifacts list --scope workspace --json"),
    "artifacts get": (
        "helix artifacts get plan.md",
        "helix artifacts get plan.md -o - --version 2",
    ),
    "artifacts put": (
        "helix artifacts put plan.md --scope workspace",
        "helix artifacts put out/report.pdf --name report.pdf",
    ),
    "artifacts rm": ("helix artifacts rm plan.md --scope workspace",),
    "workflows": ("helix workflows list", "helix workflows import release.yaml"),
    "workflows list": ("helix workflows list", "helix workflows list --workspace team --json"),
    "workflows show": ("helix workflows show release", "helix workflows show release --version 2"),
    "workflows edit": (
        "helix workflows show release > release.yaml  # change it, then:",
        "helix workflows edit release release.yaml --base-version 3",
    ),
    "workflows import": (
        "helix workflows import release.yaml",
        "helix workflows import flows/release.yaml --world repo",
    ),
    "workflows history": ("helix workflows history release",),
    "workflows run": (
        "helix workflows run release",
        "helix workflows run release --world ./repo --detach",
    ),
    "workspaces": ("helix workspaces add team --owner alice",),
    "workspaces add": ("helix workspaces add team", "helix workspaces add team --owner alice"),
}


def epilog(path: str) -> str | None:
    """The ``Examples:`` block for ``helix PATH --help`` (``""`` is ``helix`` itself)."""
    lines = EXAMPLES.get(path)
    if not lines:
        return None
    # \b keeps Click from re-wrapping the block into one paragraph.
    return "Examples:\n\n\b\n" + "\n".join(f"  {line}" for line in lines)
