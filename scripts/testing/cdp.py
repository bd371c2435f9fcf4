"""A minimal Chrome DevTools Protocol client over a WebSocket, Python standard library only.

Used by browser_check.py to drive a headless Chromium the way a user would: open a page, fill
in a form, attach a file, click a button, read what the page shows, take a screenshot.

    browser = Chromium.launch(user_data_dir)
    page = browser.page()
    page.navigate("http://127.0.0.1:8080/")
    text = page.evaluate("document.body.innerText")
    page.screenshot("items.png")
    browser.close()

Only what those steps need is implemented: text frames (sent masked, as RFC 6455 requires of
clients), fragmented and large messages, ping/pong, close. Every wait is bounded: a browser
that does not answer is an error, never a hang.
"""

import base64
import json
import os
import signal
import socket
import struct
import subprocess
import time
import urllib.parse
import urllib.request

WAIT_SECONDS = 60  # the longest any single step may take before the run fails


class CdpError(Exception):
    pass


class WebSocket:
    """A client WebSocket (RFC 6455) over a plain TCP socket."""

    def __init__(self, url):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "ws":
            raise CdpError(f"not a ws:// url: {url}")
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=WAIT_SECONDS)
        key = base64.b64encode(os.urandom(16)).decode()
        path = parts.path + (("?" + parts.query) if parts.query else "")
        request = (f"GET {path} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\n"
                   "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                   f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        self.sock.sendall(request.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise CdpError("connection closed during the WebSocket handshake")
            head += chunk
        head, self.buffer = head.split(b"\r\n\r\n", 1)
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status + b" ":
            raise CdpError(f"WebSocket handshake refused: {status!r}")

    def _read_exact(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buffer)))
            if not chunk:
                raise CdpError("the browser closed the DevTools connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def _send_frame(self, opcode, payload):
        header = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def send(self, text):
        self._send_frame(0x1, text.encode())

    def receive(self):
        """Returns the next complete text message."""
        message = b""
        while True:
            first, second = self._read_exact(2)
            fin, opcode = first & 0x80, first & 0x0F
            n = second & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read_exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read_exact(8))[0]
            mask = self._read_exact(4) if second & 0x80 else None
            payload = self._read_exact(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x9:  # ping
                self._send_frame(0xA, payload)
                continue
            if opcode == 0xA:  # pong
                continue
            if opcode == 0x8:
                raise CdpError("the browser closed the DevTools connection")
            message += payload
            if fin:
                return message.decode()

    def close(self):
        try:
            self._send_frame(0x8, b"")
        except OSError:
            pass
        self.sock.close()


class Page:
    """One browser tab, driven over its DevTools WebSocket."""

    def __init__(self, ws_url):
        self.ws = WebSocket(ws_url)
        self.next_id = 0
        self.events = []
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("DOM.enable")

    def call(self, method, **params):
        self.next_id += 1
        request_id = self.next_id
        self.ws.send(json.dumps({"id": request_id, "method": method, "params": params}))
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            message = json.loads(self.ws.receive())
            if message.get("id") == request_id:
                if "error" in message:
                    raise CdpError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)
        raise CdpError(f"{method}: no answer within {WAIT_SECONDS} s")

    def wait_for_event(self, method):
        for i, event in enumerate(self.events):
            if event["method"] == method:
                del self.events[: i + 1]
                return event
        self.events.clear()
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            message = json.loads(self.ws.receive())
            if message.get("method") == method:
                return message
        raise CdpError(f"no {method} within {WAIT_SECONDS} s")

    def set_viewport(self, width, height):
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def navigate(self, url):
        self.events.clear()
        result = self.call("Page.navigate", url=url)
        if result.get("errorText"):
            raise CdpError(f"navigating to {url}: {result['errorText']}")
        self.wait_for_event("Page.loadEventFired")

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise CdpError(f"evaluating {expression!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click_and_wait_for_load(self, selector):
        """Clicks the element (a submit button) and waits for the page it leads to."""
        self.events.clear()
        clicked = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " if (!e) return false; e.click(); return true; })()")
        if not clicked:
            raise CdpError(f"nothing to click at {selector}")
        self.wait_for_event("Page.loadEventFired")

    def set_value(self, selector, value):
        ok = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            f" if (!e) return false; e.value = {json.dumps(value)}; return true; }})()")
        if not ok:
            raise CdpError(f"no form field at {selector}")

    def set_file(self, selector, path):
        root = self.call("DOM.getDocument")["root"]["nodeId"]
        node = self.call("DOM.querySelector", nodeId=root, selector=selector)["nodeId"]
        if not node:
            raise CdpError(f"no file input at {selector}")
        self.call("DOM.setFileInputFiles", files=[os.path.abspath(path)], nodeId=node)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        self.ws.close()


class Chromium:
    """A headless Chromium process with remote debugging on a port it picks itself."""

    def __init__(self, process, user_data_dir, port):
        self.process = process
        self.user_data_dir = user_data_dir
        self.port = port

    @staticmethod
    def launch(user_data_dir, binary="chromium"):
        process = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--metrics-recording-only", "--password-store=basic",
             f"--user-data-dir={user_data_dir}", "--remote-debugging-address=127.0.0.1",
             "--remote-debugging-port=0", "--window-size=1200,900", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(user_data_dir, "chromium.log"), "w"),
            # Its own process group, so close() ends the renderers and helpers it forks too.
            start_new_session=True)
        # Chromium writes the port it chose to DevToolsActivePort once it listens.
        port_file = os.path.join(user_data_dir, "DevToolsActivePort")
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            if process.poll() is not None:
                raise CdpError(f"chromium exited with {process.returncode}; see "
                               f"{user_data_dir}/chromium.log")
            try:
                with open(port_file) as f:
                    port = int(f.readline().strip())
                break
            except (OSError, ValueError):
                if time.monotonic() > deadline:
                    process.kill()
                    raise CdpError("chromium did not open its DevTools port")
                time.sleep(0.1)
        return Chromium(process, user_data_dir, port)

    def page(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list",
                                    timeout=WAIT_SECONDS) as response:
            targets = json.load(response)
        pages = [t for t in targets if t.get("type") == "page"]
        if not pages:
            raise CdpError("chromium has no page target")
        return Page(pages[0]["webSocketDebuggerUrl"])

    def close(self):
        """Ends the browser and every process it started."""
        for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                pass
            try:
                self.process.wait(timeout=grace)
                break
            except subprocess.TimeoutExpired:
                continue
        # Helpers may outlive the main process for a moment; give the group time to go.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.killpg(self.process.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
