"""A keep-alive HTTP client for timing pages of a real server: cookies, CSRF, a request count.

The standard library's `http.client` on one connection, as a browser keeps one open;
the session and CSRF cookies are kept and sent back, a POST carries the CSRF token
as a form field, as the page's own form does.
"""

from __future__ import annotations

import http.client
import re
import time
from dataclasses import dataclass
from http.cookies import SimpleCookie
from urllib.parse import urlencode, urlsplit

CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
SERVER_TIMING = re.compile(r"app;dur=([0-9.]+)")


@dataclass(frozen=True)
class Answer:
    status: int
    location: str
    body: str
    ms: float
    server_ms: float | None
    """The app's own time (the `Server-Timing` header), without the wait for a thread."""


class Browser:
    """One connection to `base` (http://host:port) with its cookies; counts its requests."""

    def __init__(self, base: str) -> None:
        parts = urlsplit(base)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.connection = http.client.HTTPConnection(self.host, self.port, timeout=60)
        self.cookies: dict[str, str] = {}
        self.requests = 0

    def _send(self, method: str, path: str, body: str | None = None) -> Answer:
        headers = {"Host": f"{self.host}:{self.port}", "Connection": "keep-alive"}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        begin = time.perf_counter()
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        text = response.read().decode("utf-8", "replace")
        ms = (time.perf_counter() - begin) * 1000
        self.requests += 1
        for header in response.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                self.cookies[name] = morsel.value
        timing = SERVER_TIMING.search(response.headers.get("Server-Timing", ""))
        server_ms = float(timing.group(1)) if timing else None
        return Answer(response.status, response.headers.get("Location", ""), text, ms, server_ms)

    def get(self, path: str) -> Answer:
        return self._send("GET", path)

    def post(self, path: str, form: dict[str, str]) -> Answer:
        token = self.cookies.get("csrftoken", "")
        return self._send("POST", path, urlencode({"csrfmiddlewaretoken": token, **form}))

    def sign_in(self, username: str, password: str) -> None:
        page = self.get("/accounts/login/")
        found = CSRF_FIELD.search(page.body)
        if found and "csrftoken" not in self.cookies:
            self.cookies["csrftoken"] = found.group(1)
        answer = self.post("/accounts/login/", {"username": username, "password": password})
        if answer.status != 302:
            raise SystemExit(f"signing in as {username} answered {answer.status}")

    def close(self) -> None:
        self.connection.close()
