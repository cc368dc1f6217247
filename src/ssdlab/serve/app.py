"""The web application of `ssdlab serve`: routes, pages and the live event streams (aiohttp).

Pages are static files of this package (static/: HTML, CSS and the scripts that draw them); the charting library
comes from the installed plotly package (its plotly.min.js), never from the network. Data comes as JSON:
/api/runs (the catalog), /api/live/{id}/events (server-sent events of a run in progress), /metrics (Prometheus).
Stored reports and run files are sent as they are on disk, from inside their run directory only.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
from pathlib import Path
from typing import Any

from aiohttp import web

from ssdlab.serve import auth, lab, metrics
from ssdlab.serve.live import Watcher

STATIC = Path(__file__).parent / "static"
CATALOG_ID = re.compile(r"^[0-9a-f]{8}$")
MAX_COMPARE = 12
HEARTBEAT_S = 15.0
REPORT_POLICY = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'"

class State:
    """The catalog as last read (id -> run directory), the lock that keeps one refresh at a time, the options."""

    def __init__(self, root: Path, token: str, allow_tags: bool) -> None:
        self.root = root
        self.token = token
        self.allow_tags = allow_tags
        self.paths: dict[str, Path] = {}
        self.lock = asyncio.Lock()


WATCHER: web.AppKey[Watcher] = web.AppKey("watcher", Watcher)
STATE: web.AppKey[State] = web.AppKey("state", State)


def plotly_js() -> Path | None:
    """plotly.js as the installed plotly package carries it (found without importing the package)."""
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        return None
    for base in spec.submodule_search_locations:
        path = Path(base) / "package_data" / "plotly.min.js"
        if path.is_file():
            return path
    return None


# ------------------------------------------------------------------ the catalog

def _entries(root: Path) -> tuple[list[dict[str, Any]], list[str]]:
    with lab.Catalog(root) as cat:
        refresh = cat.refresh()
        entries = cat.entries()
    rows = []
    for e in entries:
        d = e.as_dict()
        d["path"] = str(e.path)
        d["has_report"] = (e.path / "report.html").is_file()
        d["has_live"] = (e.path / lab.LIVE_FILE).is_file()
        rows.append(d)
    return rows, list(refresh.unreadable)


async def catalog(request: web.Request) -> tuple[list[dict[str, Any]], list[str]]:
    """The catalog brought up to date: its runs, and the run directories it could not read."""
    state = request.app[STATE]
    async with state.lock:
        rows, bad = await asyncio.to_thread(_entries, state.root)
    state.paths = {r["id"]: Path(r["path"]) for r in rows}
    return rows, bad


async def run_dir(request: web.Request, ref: str) -> Path:
    """The run directory of a catalog id (404 for anything else)."""
    if not CATALOG_ID.match(ref):
        raise web.HTTPNotFound(text=f"{ref!r} is not a run id of this catalog\n")
    state = request.app[STATE]
    if ref not in state.paths:
        await catalog(request)
    path = state.paths.get(ref)
    if path is None:
        raise web.HTTPNotFound(text=f"no run {ref} in {state.root}\n")
    return path


async def api_runs(request: web.Request) -> web.Response:
    rows, bad = await catalog(request)
    live = {r.id: r.status for r in request.app[WATCHER].in_progress()}
    for r in rows:
        r["live_now"] = r["id"] in live
    return web.json_response({"root": str(request.app[STATE].root), "runs": rows, "unreadable": bad,
                              "allow_tags": request.app[STATE].allow_tags})


async def api_tags(request: web.Request) -> web.Response:
    """Set and remove tags of one run (DIR/tags.json), only when `ssdlab serve --allow-tag-edits`."""
    state = request.app[STATE]
    if not state.allow_tags:
        raise web.HTTPForbidden(text="tags are read-only: start `ssdlab serve --allow-tag-edits` to edit them\n")
    path = await run_dir(request, request.match_info["id"])
    try:
        body = await request.json()
    except ValueError:
        raise web.HTTPBadRequest(text="send JSON: {\"set\": {\"key\": \"value\"}, \"remove\": [\"key\"]}\n") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text="send a JSON object\n")
    try:
        tags = dict(lab.read_tags(path))
        for key in body.get("remove") or []:
            tags.pop(str(key), None)
        for key, value in (body.get("set") or {}).items():
            k, v = lab.parse_tag(f"{key}={value}")
            tags[k] = v
        async with state.lock:
            await asyncio.to_thread(lab.write_tags, path, tags)
    except lab.SsdlabError as exc:
        raise web.HTTPBadRequest(text=f"{exc}\n") from None
    return web.json_response({"tags": tags})


# ------------------------------------------------------------------ stored files

def inside(base: Path, tail: str) -> Path | None:
    """The regular file `tail` names under `base`, or None when it is elsewhere (.., an absolute path, a link
    out of the run directory), hidden, or not a regular file."""
    if not tail or "\0" in tail or tail.startswith("/") or "\\" in tail:
        return None
    parts = tail.split("/")
    if any(p in ("", ".", "..") or p.startswith(".") for p in parts):
        return None
    root = base.resolve()
    try:
        path = (root / tail).resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not path.is_relative_to(root) or not path.is_file():
        return None
    return path


async def run_file(request: web.Request) -> web.StreamResponse:
    base = await run_dir(request, request.match_info["id"])
    path = inside(base, request.match_info.get("tail") or "report.html")
    if path is None:
        name = request.match_info.get("tail") or "report.html"
        hint = f": `ssdlab report {base}` writes it" if name == "report.html" else ""
        raise web.HTTPNotFound(text=f"no file {name!r} in this run{hint}\n")
    response = web.FileResponse(path)
    response.headers["Content-Security-Policy"] = REPORT_POLICY  # what a stored file shows runs in no origin
    if path.suffix not in (".html", ".svg", ".csv", ".json", ".txt", ".fio", ".log", ".png"):
        response.headers["Content-Disposition"] = "attachment"
    return response


async def report(request: web.Request) -> web.StreamResponse:
    """A run's report.html, at a URL under which its relative links (pts/*.csv, points/...) resolve."""
    raise web.HTTPSeeOther(f"/runs/{request.match_info['id']}/files/report.html")


async def compare(request: web.Request) -> web.Response:
    refs = request.query.getall("run", [])
    if not 2 <= len(refs) <= MAX_COMPARE:
        raise web.HTTPBadRequest(text=f"tick 2 to {MAX_COMPARE} runs to compare (the first is the baseline)\n")
    dirs = [await run_dir(request, r) for r in refs]
    try:
        text = await asyncio.to_thread(lab.compare_html, dirs)
    except lab.SsdlabError as exc:
        raise web.HTTPBadRequest(text=f"cannot compare: {exc}\n") from None
    return web.Response(text=text, content_type="text/html", headers={"Content-Security-Policy": REPORT_POLICY})


# ------------------------------------------------------------------ runs in progress

async def api_live(request: web.Request) -> web.Response:
    runs = request.app[WATCHER].in_progress()
    return web.json_response({"runs": [r.state() | {"suite": r.stored.get("suite")} for r in runs]})


async def events(request: web.Request) -> web.StreamResponse:
    """Server-sent events of one run: the whole history first ("snapshot"), then what is new each second."""
    watcher = request.app[WATCHER]
    ref = request.match_info["id"]
    run = next((r for r in watcher.runs.values() if r.id == ref), None)
    if run is None:
        path = await run_dir(request, ref)
        if not (path / lab.LIVE_FILE).is_file():
            raise web.HTTPNotFound(text="this run has no live record (it was made before ssdlab kept one)\n")
        run = await watcher.follow(path)
    key = str(run.path.resolve())
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store",
                                           "X-Accel-Buffering": "no"})
    await response.prepare(request)
    queue = watcher.subscribe(key)
    try:
        while True:
            try:
                data = await asyncio.wait_for(queue.get(), HEARTBEAT_S)
            except TimeoutError:
                data = b": still here\n\n"
            if data is None:
                break
            await response.write(data)
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        watcher.unsubscribe(key, queue)
    return response


async def metrics_text(request: web.Request) -> web.Response:
    watcher = request.app[WATCHER]
    return web.Response(body=metrics.render(watcher.runs.values(), watcher.error).encode(),
                        headers={"Content-Type": metrics.CONTENT_TYPE, "X-Content-Type-Options": "nosniff"})


# ------------------------------------------------------------------ pages and login

def page(name: str) -> Any:
    async def handler(request: web.Request) -> web.FileResponse:
        return web.FileResponse(STATIC / name, headers={"Cache-Control": "no-store"})
    return handler


async def login(request: web.Request) -> web.StreamResponse:
    if request.method == "GET":
        return web.FileResponse(STATIC / "login.html")
    form = await request.post()
    given = str(form.get("token", ""))
    if not auth.same_token(given, request.app[STATE].token):
        raise web.HTTPUnauthorized(text="wrong token: use the URL or token `ssdlab serve` printed\n")
    response = web.HTTPSeeOther("/")
    response.set_cookie(auth.COOKIE, given, httponly=True, samesite="Lax", path="/")
    raise response


async def vendor_plotly(request: web.Request) -> web.FileResponse:
    path = plotly_js()
    if path is None:
        raise web.HTTPNotFound(text="plotly is not installed: pip install plotly (ssdlab depends on it)\n")
    return web.FileResponse(path, headers={"Cache-Control": "max-age=86400"})


def make_app(root: Path, token: str, *, allow_tags: bool = False) -> web.Application:
    """The application over one results root; every request needs `token` (auth.py)."""
    app = web.Application(middlewares=[auth.guard(token)], client_max_size=64 * 1024)
    app[STATE] = State(root, token, allow_tags)
    app[WATCHER] = Watcher(root)
    r = app.router
    r.add_get("/", page("catalog.html"))
    r.add_get("/live/{id}", page("live.html"))
    r.add_route("*", "/login", login)
    r.add_get("/api/runs", api_runs)
    r.add_post("/api/runs/{id}/tags", api_tags)
    r.add_get("/api/live", api_live)
    r.add_get("/api/live/{id}/events", events)
    r.add_get("/runs/{id}/report", report)
    r.add_get("/runs/{id}/files/{tail:.+}", run_file)
    r.add_get("/compare", compare)
    r.add_get("/metrics", metrics_text)
    r.add_get("/vendor/plotly.min.js", vendor_plotly)
    r.add_static("/static", STATIC, follow_symlinks=False)

    async def start(app: web.Application) -> None:
        app[WATCHER].start()

    async def stop(app: web.Application) -> None:
        await app[WATCHER].stop()

    app.on_startup.append(start)
    app.on_shutdown.append(stop)
    return app
