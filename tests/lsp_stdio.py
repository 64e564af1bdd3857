"""A language server driven over stdio as an editor drives it (JSON-RPC with Content-Length frames), to collect
the diagnostics it publishes for the files opened. Only what the editor tests need: no network, one process."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any


class LanguageServerError(RuntimeError):
    """The server died, answered an error or stayed silent past the deadline."""


def _read_frames(stream: IO[bytes], inbox: queue.Queue[dict[str, Any] | None]) -> None:
    while True:
        length = None
        while True:
            header = stream.readline()
            if not header:
                inbox.put(None)
                return
            if header in (b"\r\n", b"\n"):
                break
            name, _, value = header.decode("ascii").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        if length is not None:
            inbox.put(json.loads(stream.read(length)))


class LanguageServer:
    """One server process; `diagnostics()` opens documents and waits until it has said what it thinks of each."""

    def __init__(self, command: list[str], root: Path, settings: dict[str, Any]) -> None:
        self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, cwd=root)
        self._inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        assert self._process.stdout is not None
        threading.Thread(target=_read_frames, args=(self._process.stdout, self._inbox), daemon=True).start()
        self._next_id = 0
        self._settings = settings
        self.published: dict[str, list[dict[str, Any]]] = {}

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self._process.stdin is not None
        self._process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self._process.stdin.flush()

    def start(self, root: Path) -> None:
        """initialize, initialized, then the settings pushed (a server that pulls them is answered the same)."""
        self.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {
            "workspace": {"configuration": True},
            "textDocument": {"publishDiagnostics": {"relatedInformation": False}}}})
        self.notify("initialized", {})
        self.notify("workspace/didChangeConfiguration", {"settings": self._settings})

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def _take(self, timeout: float) -> dict[str, Any] | None:
        """The next message (answering the server's own requests, keeping its diagnostics), or None on silence."""
        try:
            message = self._inbox.get(timeout=max(timeout, 0.01))
        except queue.Empty:
            return None
        if message is None:
            raise LanguageServerError(f"the server exited ({self._process.poll()})")
        if message.get("method") == "workspace/configuration":  # the settings, pulled section by section
            items = message["params"]["items"]
            self._send({"id": message["id"], "result": [self._settings.get(i.get("section", "")) for i in items]})
        elif "method" in message and "id" in message:  # registerCapability, workDoneProgress/create
            self._send({"id": message["id"], "result": None})
        elif message.get("method") == "textDocument/publishDiagnostics":
            self.published[message["params"]["uri"]] = message["params"]["diagnostics"]
        return message

    def request(self, method: str, params: Any, timeout: float = 60) -> Any:
        self._next_id += 1
        ident = self._next_id
        self._send({"id": ident, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = self._take(deadline - time.monotonic())
            if message is not None and message.get("id") == ident and "method" not in message:
                if "error" in message:
                    raise LanguageServerError(f"{method}: {message['error']}")
                return message.get("result")
        raise LanguageServerError(f"{method}: no answer in {timeout} s")

    def diagnostics(self, documents: dict[str, str], timeout: float = 90, quiet: float = 1.5
                    ) -> dict[str, list[dict[str, Any]]]:
        """Open each document (uri: text) and return what the server last published for each: it publishes at
        least once per opened document; then it is waited for until `quiet` seconds pass without a word."""
        for uri, text in documents.items():
            self.notify("textDocument/didOpen",
                        {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            waiting = [uri for uri in documents if uri not in self.published]
            message = self._take(min(quiet, deadline - time.monotonic()))
            if message is None and not waiting:
                return {uri: self.published[uri] for uri in documents}
        missing = sorted(uri for uri in documents if uri not in self.published)
        raise LanguageServerError(f"no diagnostics in {timeout} s for {missing[:5]}")

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            self._process.wait(timeout=10)
        except (LanguageServerError, OSError, subprocess.TimeoutExpired):
            self._process.kill()
            self._process.wait()
