"""Ray clusters on this machine for the tests and bench/ladder.py: a head and, when asked, more nodes,
each a `ray start --block` process in a session of its own with a temporary folder of its own, so that
one node can be killed alone (its whole session: raylet, workers, agents), as a machine is lost.

Two clusters on one machine (two test runs at once, or a benchmark beside the tests) must never collide,
and `ray start` has fixed defaults: the GCS on 6379, the Ray client server on 10001, the dashboard
agent's HTTP server on 52365, the workers in 10002-19999 (Ray issues 18053 and 37229). So every port a
node opens is the kernel's choice at the bind, 0, which no other process can take between a probe and
the bind, wherever Ray takes 0: the GCS (`--port=0`, its address read back from the head's
`ray_current_cluster` file once the head is up), the node manager, the object manager, the dashboard
agent's gRPC and HTTP servers, the metrics export, the runtime environment agent, and each worker
(`--min-worker-port=0 --max-worker-port=0`, as Ray's own `cluster_utils` does). Only the Ray client
server, which `ray start --head` always starts where gRPC is installed (as it is with this project) and
whose port Ray refuses to be 0, gets a port found free by binding.

Each node keeps its own `--temp-dir`, which Ray honours on a node that is not the head since its pull
request 57735 (late 2025; 2.60 does), and only the head runs a log monitor (one a machine, as
`cluster_utils` has it). Of several nodes at one address, Ray connects a driver on this machine to the
head (`get_node_to_connect_for_driver`), so a runner here outlives any other node.

Kept free of pytest but for `require_ray`, so that the benchmarks import it too.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[1]
"""This checkout, importable by the cluster's workers and by the runs that join it."""

START_TIMEOUT_S: Final = 60.0
"""How long a node has to come up (two cores shared with other tests: usually 2 to 8 seconds)."""

KERNEL_CHOOSES: Final = (
    "--node-manager-port=0",
    "--object-manager-port=0",
    "--dashboard-agent-grpc-port=0",
    "--dashboard-agent-listen-port=0",
    "--metrics-export-port=0",
    "--runtime-env-agent-port=0",
    "--min-worker-port=0",
    "--max-worker-port=0",
)
"""The ports every node opens, left to the kernel at the bind."""

_ADDRESS: Final = re.compile(r"\S+:\d+")


class RayClusterError(RuntimeError):
    """A node did not come up: the message ends with its `ray start` log."""


def ray_command() -> Path | None:
    """The `ray` command of this interpreter's environment, None without Ray."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return None
    beside = Path(sys.executable).with_name("ray")
    if beside.exists():
        return beside
    # A virtualenv made with --system-site-packages imports Ray from the system, whose command is there.
    found = shutil.which("ray")
    return beside if found is None else Path(found)


def require_ray() -> Path:
    """The `ray` command; the test is skipped without Ray, failed under CI (which installs it)."""
    import pytest

    command = ray_command()
    if command is None:
        if os.environ.get("CI"):
            pytest.fail("Ray is not installed; CI installs the dev extra, which includes it")
        pytest.skip("Ray is not installed (pip install -e '.[cluster]')")
    return command


def free_port() -> int:
    """A TCP port nobody listens on now (for the one port Ray will not leave to the kernel)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class NodeSpec:
    """What one node offers: its CPUs, and custom resources a test can steer tasks with."""

    cpus: int
    resources: Mapping[str, float] = field(default_factory=dict)


@dataclass
class RayNode:
    """One node's `ray start --block` process (the leader of its own session) and its folder."""

    name: str
    folder: Path
    process: subprocess.Popen[bytes]

    @property
    def log(self) -> Path:
        """Where `ray start` wrote (its own log; Ray's processes log under `folder/session_*/logs`)."""
        return self.folder / "ray-start.log"

    def alive(self) -> bool:
        return self.process.poll() is None

    def processes(self) -> list[int]:
        """The processes of the node's session (those that left it, as bots do, are not among them)."""
        found = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, IndexError):
                if int(stat.read_text().rsplit(")", 1)[1].split()[3]) == self.process.pid:  # its session
                    found.append(int(stat.parent.name))
        return found

    def listening_ports(self) -> set[int]:
        """The TCP ports the node's processes listen on (Linux's /proc: their sockets' inodes)."""
        inodes: set[str] = set()
        for pid in self.processes():
            with contextlib.suppress(OSError):
                for descriptor in Path(f"/proc/{pid}/fd").iterdir():
                    with contextlib.suppress(OSError):
                        target = os.readlink(descriptor)
                        if target.startswith("socket:["):
                            inodes.add(target[len("socket:[") : -1])
        ports = set()
        for table in ("tcp", "tcp6"):
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
                    fields = line.split()
                    if fields[3] == "0A" and fields[9] in inodes:  # state LISTEN
                        ports.add(int(fields[1].rsplit(":", 1)[1], 16))
        return ports

    def kill(self) -> None:
        """SIGKILL the node's whole session at once (nothing of it stops gracefully), and reap it: every
        process of it, since Ray puts each worker in a process group of its own, which a signal to the
        leader's group missed (a worker outlived its raylet and finished its match, its outcome sent
        straight to the runner)."""
        for _ in range(2):  # once more for a process started while the first were being killed
            for pid in [self.process.pid, *self.processes()]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        """Stop the node (`ray start --block` stops what it started on SIGTERM), then whatever of its
        session is left, and remove its folder."""
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=30)
        self.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


@dataclass
class RayCluster:
    """A running cluster: its head's GCS address, its nodes (the head first), and the environment of
    every process of it and of the runs that join it (this checkout importable, the cluster's token)."""

    command: Path
    environment: dict[str, str]
    nodes: list[RayNode] = field(default_factory=list)
    address: str = ""

    @property
    def head(self) -> RayNode:
        return self.nodes[0]

    def add_node(self, spec: NodeSpec) -> RayNode:
        """Start one more node (the first is the head) and wait until it has joined."""
        name = "head" if not self.nodes else f"node{len(self.nodes) + 1}"
        folder = Path(tempfile.mkdtemp(prefix=f"ray-{name}-", dir="/tmp"))  # socket paths must stay short
        arguments = [str(self.command), "start", "--block", f"--temp-dir={folder}", f"--num-cpus={spec.cpus}"]
        if spec.resources:
            arguments.append(f"--resources={json.dumps(dict(spec.resources))}")
        if self.nodes:
            arguments += [f"--address={self.address}", "--include-log-monitor=false"]
        else:
            arguments += ["--head", "--port=0", f"--ray-client-server-port={free_port()}"]
            arguments.append("--include-dashboard=false")
        arguments += [*KERNEL_CHOOSES, "--disable-usage-stats"]
        with (folder / "ray-start.log").open("wb") as log:
            process = subprocess.Popen(
                arguments,
                env=self.environment,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        node = RayNode(name, folder, process)
        self.nodes.append(node)
        address = _wait_until_up(node)
        if not self.address:
            self.address = address
        return node

    def stop(self) -> None:
        """Stop every node, the head last."""
        for node in reversed(self.nodes):
            node.stop()


def _wait_until_up(node: RayNode) -> str:
    """The GCS address, once the node has written it: `ray start` does so when its raylet has
    registered with the GCS (ray._private.node waits for that), just before it blocks."""
    written = node.folder / "ray_current_cluster"
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        with contextlib.suppress(FileNotFoundError):
            address = written.read_text().strip()
            if _ADDRESS.fullmatch(address):
                return address
        if not node.alive() or time.monotonic() > deadline:
            log = node.log.read_text(errors="replace")[-3000:] if node.log.exists() else ""
            raise RayClusterError(f"ray start did not start the {node.name}: {log}")
        time.sleep(0.2)


def environment(token: str | None = None) -> dict[str, str]:
    """This process's environment with this checkout importable and the cluster's own authentication
    token (default: a new one), so that whatever token the user has in ~/.ray is neither read nor made."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {
        **os.environ,
        "PYTHONPATH": path,
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": token or secrets.token_hex(32),
    }


@contextlib.contextmanager
def ray_cluster(
    nodes: Sequence[NodeSpec], environment_of_nodes: dict[str, str] | None = None, command: Path | None = None
) -> Iterator[RayCluster]:
    """A cluster of `nodes` (the first the head), each started and joined in turn; stopped at the end,
    its folders removed. `environment_of_nodes`: default `environment()`; `command`: the `ray` command
    (default: this environment's).

    :raises RayClusterError: a node did not come up (the nodes started so far are stopped).
    """
    found = command or ray_command()
    if found is None:
        raise RayClusterError("Ray is not installed (pip install -e '.[cluster]')")
    cluster = RayCluster(found, environment_of_nodes or environment())
    try:
        for spec in nodes:
            cluster.add_node(spec)
        yield cluster
    finally:
        cluster.stop()
