"""The FastAPI app: routes, error handling, limits, the dashboard, and its lifetime.

The app owns one supervisor: runs started or resumed through it are its children, so
stopping the server stops driving them (their logs keep them; the next start resumes).
"""

from __future__ import annotations

import asyncio
import logging
import mimetypes
import re
import secrets
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from helix._version import __version__
from helix.accounts import Accounts
from helix.distributed import open_executor
from helix.kernel.log import EventStore
from helix.runtime import ChildSpec, Supervisor, open_supervisor

from . import (
    _hooks,
    _links,
    _routes_auth,
    _routes_automations,
    _routes_blueprints,
    _routes_branches,
    _routes_budgets,
    _routes_control,
    _routes_graphs,
    _routes_live,
    _routes_memory,
    _routes_nodes,
    _routes_plugins,
    _routes_policy,
    _routes_runs,
    _routes_trace,
    _routes_workflows,
    _routes_world,
    _stream,
)
from ._auth import Signer
from ._config import ServerConfig
from ._deps import CallerDep
from ._errors import install_error_handlers
from ._headers import CSP, SecurityHeaders, content_policy, source_hash
from ._limits import BodyLimit
from ._metrics import Metrics
from ._notify import Notifier
from ._scheduler import Scheduler
from ._state import ServerState, open_server_engine
from ._stores import open_stores

if TYPE_CHECKING:
    from helix.telemetry import OtlpSink

log = logging.getLogger("helix.server")

API = "/api/v1"
STATIC = Path(__file__).parent / "static"
mimetypes.add_type("application/manifest+json", ".webmanifest")  # some systems lack it

Announce = Callable[[str], None]


def _print_link(link: str) -> None:
    sys.stderr.write(
        "\nHelix created the first account, 'admin' (owner of workspace 'default').\n"
        f"Open this link once to sign in (it works one time, for 24 hours):\n\n    {link}\n\n"
    )
    sys.stderr.flush()


async def _restarted(child: str, error: BaseException, attempt: int) -> None:
    log.warning("%s crashed (%s: %s); restart %d", child, type(error).__name__, error, attempt)


async def _gave_up(child: str, error: BaseException) -> None:
    log.error("%s kept crashing (%s: %s); stopped", child, type(error).__name__, error)


def _start_export(
    config: ServerConfig, store: EventStore, supervisor: Supervisor
) -> OtlpSink | None:
    """With ``config.otel``: a supervised child exporting every run's spans as they close."""
    if config.otel is None:
        return None
    from helix.telemetry import OtlpSink, TraceExport

    sink = OtlpSink(config.otel)
    export = TraceExport(sink, gate_reasons=config.otel.gate_reasons)
    supervisor.start_child(ChildSpec(id="telemetry", start=partial(export.follow, store)))
    return sink


def _start_children(config: ServerConfig, state: ServerState, signer: Signer) -> OtlpSink | None:
    """Start the server's supervised followers: metrics, notices, export, automations, resume.

    Returns the trace sink, if export is on (closed when the server stops).
    """
    supervisor, store = state.supervisor, state.store
    supervisor.start_child(ChildSpec(id="metrics", start=partial(state.metrics.follow, store)))
    if config.notify:
        notifier = Notifier(config.notify, config.public_url, signer)
        supervisor.start_child(ChildSpec(id="notify", start=partial(notifier.follow, store)))
    sink = _start_export(config, store, supervisor)
    state.scheduler = Scheduler(state, state.clock)
    if config.automations:
        scheduler = state.scheduler
        supervisor.start_child(ChildSpec(id="automations", start=scheduler.run))
        supervisor.start_child(ChildSpec(id="automation-events", start=scheduler.follow))
    if config.resume_on_start:
        supervisor.start_child(ChildSpec(id="resume", start=state.resume_all))
    return sink


def create_app(config: ServerConfig, *, announce: Announce = _print_link) -> FastAPI:
    """The server's app; it opens the store and starts supervising runs when it starts."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with open_stores(config) as stores:  # closed in reverse order
            accounts = Accounts(stores.accounts, config.hashing)
            signer = Signer(await stores.accounts.secret("jwt", secrets.token_bytes(32)))
            metrics = Metrics()
            async with (
                open_supervisor(on_restart=_restarted, on_give_up=_gave_up) as supervisor,
                AsyncExitStack() as executor_stack,
            ):
                state = ServerState(config, stores, accounts, signer, supervisor, metrics)
                state.executor = await executor_stack.enter_async_context(
                    open_executor(
                        config.executor,
                        engine=state.engine,
                        supervisor=supervisor,
                        opener=partial(open_server_engine, config),
                        workers=config.workers,
                        ray_address=config.ray_address,
                        env=config.environment,  # the Ray token
                        replies=state.replies,
                    )
                )
                app.state.helix = state
                state.bootstrap_token = await accounts.bootstrap()
                if state.bootstrap_token is not None:
                    announce(f"{config.public_url}/#login={state.bootstrap_token}")
                sink = _start_children(config, state, signer)
                try:
                    yield
                finally:
                    state.stop()
                    if sink is not None:
                        await asyncio.to_thread(sink.close, 5.0)

    app = FastAPI(
        title="Helix",
        version=__version__,
        summary="Supervised agent runs whose event log is the session.",
        openapi_url=f"{API}/openapi.json",
        docs_url=None,  # served below, with a policy that lets its CDN files in
        redoc_url=None,
        lifespan=lifespan,
    )
    install_error_handlers(app)
    api = APIRouter(prefix=API)
    api.include_router(_routes_auth.router)
    api.include_router(_routes_runs.router)
    api.include_router(_routes_control.router)
    api.include_router(_routes_graphs.router)
    api.include_router(_routes_world.router)
    api.include_router(_routes_branches.router)
    api.include_router(_routes_blueprints.router)
    api.include_router(_routes_automations.router)
    api.include_router(_routes_budgets.router)
    api.include_router(_hooks.router)
    api.include_router(_routes_plugins.router)
    api.include_router(_routes_nodes.router)
    api.include_router(_routes_policy.router)
    api.include_router(_routes_trace.router)
    api.include_router(_routes_live.router)
    api.include_router(_routes_workflows.router)
    api.include_router(_routes_memory.router)
    api.include_router(_stream.router)
    api.include_router(_links.router)

    @api.get("/metrics", tags=["server"], response_class=Response)
    async def metrics(request: Request, _caller: CallerDep) -> Response:
        """Prometheus metrics (text exposition format); any user's token (an API token).

        Server-wide counts, so not public: run and token totals say how a team works.
        """
        state: ServerState = request.app.state.helix
        body = await state.metrics.render(state.store)
        return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")

    @app.get(f"{API}/docs", include_in_schema=False)
    async def docs(request: Request) -> HTMLResponse:
        """The API's interactive docs (Swagger UI, from its CDN)."""
        root = request.scope.get("root_path", "")
        page = get_swagger_ui_html(openapi_url=f"{root}{API}/openapi.json", title="Helix API")
        return HTMLResponse(page.body, headers={CSP: _docs_policy(bytes(page.body).decode())})

    app.include_router(api)
    app.mount("/", StaticFiles(directory=STATIC, html=True), name="dashboard")
    app.add_middleware(
        BodyLimit,
        max_bytes=config.max_body_bytes,
        large={f"{API}/runs/import": config.max_import_bytes},
        matching=_routes_memory.body_limits(API, config.max_import_bytes),
    )
    if config.forwarded_allow_ips:
        # Only these proxies' X-Forwarded-For/-Proto are believed; helix serve turns
        # uvicorn's own handling (which trusts 127.0.0.1 by default) off.
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=list(config.forwarded_allow_ips))
    app.add_middleware(SecurityHeaders)  # outermost: a 413 refused early gets them too
    return app


_CDN = "https://cdn.jsdelivr.net"
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def _docs_policy(page: str) -> str:
    """Swagger UI's files from its CDN and its one inline script, by hash."""
    inline = " ".join(source_hash(script) for script in _INLINE_SCRIPT.findall(page))
    return content_policy(
        script=f"{_CDN} {inline}",
        style=f"{_CDN} 'unsafe-inline'",
        img=f"'self' data: {_CDN} https://fastapi.tiangolo.com",
    )
