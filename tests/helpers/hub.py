"""The course's JupyterHub for a test module (``tests/deploy/test_hub_*.py``): what it needs, started, stopped.

Each module builds its own :class:`local_hub.Hub` (its users, its settings); :func:`new_hub` gives it free loopback
ports and a fresh world-readable folder, :func:`running_hub` starts it and always stops it, the proxy included.
"""

from __future__ import annotations

import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HUB_VENV = REPO / ".venv-hub"
HUB_START_TIMEOUT = 90  # seconds for the hub's API to answer

try:  # pytest puts tests/deploy on sys.path (rootdir without __init__.py) ...
    from test_browser import free_port, stop_server, wait_until_serving
except ImportError:  # ... or tests/ is a package
    from tests.deploy.test_browser import free_port, stop_server, wait_until_serving

sys.path.insert(0, str(REPO / "deploy" / "jupyterhub"))
import local_hub  # noqa: E402


def skip_or_fail(reason: str):
    """Skip outside CI; in CI (``CI`` set) fail: the hub tests must run there."""
    if os.environ.get("CI"):
        pytest.fail(f"the hub test cannot run in CI: {reason}")
    pytest.skip(reason)


def hub_venv(why_root: str) -> Path:
    """``.venv-hub``, once it is known this process is root (the hub makes system users) and the venv is there."""
    if os.geteuid() != 0:
        skip_or_fail(why_root)
    if not (HUB_VENV / "bin" / "jupyterhub").exists():
        skip_or_fail(f"{HUB_VENV} is missing: run `make hub-install`")
    return HUB_VENV


def new_hub(prefix: str, **settings) -> tuple[Path, local_hub.Hub]:
    """A fresh folder (``prefix`` + random, mode 755: every user reaches the exchange in it) and a hub on free
    loopback ports whose state and exchange live there; ``settings`` are the rest of :class:`local_hub.Hub`."""
    base = Path(tempfile.mkdtemp(prefix=prefix))
    base.chmod(0o755)
    hub = local_hub.Hub(url=f"http://127.0.0.1:{free_port()}", internal_port=free_port(),
                        proxy_api_port=free_port(), state=base / "state", exchange=base / "exchange", **settings)
    return base, hub


@contextmanager
def running_hub(hub: local_hub.Hub, log_path: Path):
    """``hub`` started with its log at ``log_path``, serving its API; stopped on leaving (its users' servers on
    SIGTERM, then anything left in its process group, the proxy included)."""
    process = None
    try:
        with open(log_path, "wb") as log:
            process = local_hub.start(hub, log=log)
            wait_until_serving(process, f"{hub.url}/hub/api/", log_path, "JupyterHub", HUB_START_TIMEOUT, poll=0.5)
            hub.log_path = log_path
            yield hub
    finally:
        if process is not None:  # the hub stops the users' servers on SIGTERM; the proxy is in its process group
            stop_server(process, grace=30)
