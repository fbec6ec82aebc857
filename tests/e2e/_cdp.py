"""A minimal Chrome DevTools Protocol client over a websocket, for the browser tests.

Debian's headless Chromium is started on 127.0.0.1 with a private profile and no network
features; pages are driven with ``Page.navigate`` / ``Runtime.evaluate`` and captured with
``Page.captureScreenshot``. No browser download, no third-party driver.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

CHROMIUM_FLAGS = (
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
    "--disable-default-apps", "--disable-extensions", "--hide-scrollbars",
    "--remote-allow-origins=*",
)


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """One headless Chromium and one page; close() ends the process it started."""

    def __init__(self, binary: str, width: int = 1600, height: int = 1000) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="fleet-chromium-"))
        self._stack = contextlib.ExitStack()
        # Debian's /usr/bin/chromium is a wrapper script: the browser is its child, so it runs in
        # a session of its own and close() ends the whole process group.
        self.proc = subprocess.Popen(
            [binary, *CHROMIUM_FLAGS, "--remote-debugging-address=127.0.0.1",
             "--remote-debugging-port=0", f"--user-data-dir={self.profile}",
             f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        try:
            self._connect(width, height)
        except BaseException:
            self.close()
            raise

    def _connect(self, width: int, height: int) -> None:
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text().strip():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list",
                                                    timeout=10).read())
        page = next(t for t in targets if t.get("type") == "page")
        self.ws: ClientConnection = self._stack.enter_context(
            connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=10))
        self._id = 0
        self.send("Page.enable")
        self.send("Runtime.enable")
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv(timeout=60))
            if message.get("id") == self._id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def goto(self, url: str) -> None:
        self.send("Page.navigate", url=url)

    def wait_for_text(self, *texts: str, timeout: float = 60.0) -> str:
        """Wait until the page's text contains every one of ``texts``; returns the text."""
        deadline = time.monotonic() + timeout
        body = ""
        while time.monotonic() < deadline:
            body = str(self.evaluate("document.body ? document.body.innerText : ''") or "")
            if all(t in body for t in texts):
                return body
            time.sleep(0.25)
        missing = [t for t in texts if t not in body]
        raise AssertionError(f"page never showed {missing}; it shows:\n{body[:3000]}")

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self._stack.close()
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            shutil.rmtree(self.profile, ignore_errors=True)
