"""The benchmarks' client of a spawned server: one request at a time, every frame read and parsed.

server = Spawned(command, env)
answer = server.request("initialize", {"protocolVersion": 1})  # the result; an error raises
server.frames, server.seconds                                  # frames read before it, time taken
server.peak_rss_mb()                                           # the server's VmHWM
server.close()
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any


class Spawned:
    """A server process spoken to over its stdio."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        self.next_id = 0
        self.frames = 0
        """Frames read before the last answer (notifications, the agent's own requests)."""
        self.seconds = 0.0
        """Seconds from sending the last request until its answer was read."""

    def request(self, method: str, params: dict[str, Any]) -> Any:
        """Send a request and read until its answer (parsing every frame, as an editor does); its
        result, or RuntimeError for an error answer or a server that exited."""
        assert self.process.stdin is not None and self.process.stdout is not None
        start = time.perf_counter()
        self.next_id += 1
        frame = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.process.stdin.write(json.dumps(frame).encode() + b"\n")
        self.process.stdin.flush()
        self.frames = 0
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"the server exited before answering {method}")
            answer = json.loads(line)
            if answer.get("id") == self.next_id and "method" not in answer:
                self.seconds = time.perf_counter() - start
                if "error" in answer:
                    raise RuntimeError(f"{method} failed: {answer['error']}")
                return answer["result"]
            self.frames += 1

    def peak_rss_mb(self) -> float:
        return peak_rss_mb(self.process.pid)

    def close(self) -> None:
        """End the input and wait for the server to exit."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def peak_rss_mb(pid: int) -> float:
    """A live process's peak resident set (`VmHWM`), in MB."""
    return status_kb(pid, "VmHWM") / 1024


def status_kb(pid: int, field: str) -> int:
    """A memory figure of a live process's `/proc/<pid>/status` (`VmRSS`, `VmHWM`), in KB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} for process {pid}")
