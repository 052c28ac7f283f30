"""What `pixgate serve` works out before it listens, and tells its user: where it listens, the
addresses of its pages, the public URL its charges carry, and what will not work.

The public URL (`PIXGATE_PUBLIC_URL`) goes into every charge's BR Code. Left unset, it is the
address the server listens on, so `--port 9000` gives QR codes that point at port 9000. Set,
it is kept as it is; a warning says when it names this machine (a loopback address, or the
address bound) on another port or scheme, since nothing would answer there. A URL of any
other host is taken as a proxy or load balancer in front, which the server cannot check.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

WILDCARDS = frozenset({"0.0.0.0", "::", ""})  # noqa: S104 - names of "every address", compared
PAGES = (
    ("API docs", "/docs"),
    ("dashboard", "/dashboard"),
    ("liveness", "/healthz"),
    ("readiness", "/readyz"),
    ("metrics", "/metrics"),
)


def local_url(host: str, port: int) -> str:
    """The base URL this machine reaches the server at (a wildcard address on loopback)."""
    shown = "127.0.0.1" if host in WILDCARDS else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"


def _is_loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def public_url_mismatch(public_url: str, host: str, port: int) -> str | None:
    """Why a configured public URL cannot reach this server, or None when it may."""
    parts = urlsplit(public_url)
    url_host = (parts.hostname or "").lower()
    try:
        url_port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return f"PIXGATE_PUBLIC_URL {public_url!r} has no valid port"
    bound_elsewhere = host not in WILDCARDS and not _is_loopback(host)
    if _is_loopback(url_host) and bound_elsewhere:
        reason = f"the server listens on {host}, not on loopback"
    elif not (_is_loopback(url_host) or url_host == host.lower()):
        return None
    elif (parts.scheme, url_port) != ("http", port):
        reason = f"the server listens on {local_url(host, port)}"
    else:
        return None
    return (
        f"PIXGATE_PUBLIC_URL is {public_url}, but {reason}: charge QR codes will point where "
        "nothing answers. Unset it to derive it from --host and --port, or set the address "
        "clients reach (a proxy's https:// URL)."
    )


def _origin(derived: bool) -> str:
    return "from --host and --port" if derived else "PIXGATE_PUBLIC_URL"


def banner(base: str, public_url: str, *, derived: bool, with_worker: bool) -> list[str]:
    """The lines `serve` prints before it listens, on a terminal."""
    role = "API and job worker" if with_worker else "API only, no job worker"
    lines = [
        f"pixgate listening on {base} ({role})",
        f"  {'public URL':<11} {public_url}  ({_origin(derived)}; charges' QR codes carry it)",
    ]
    lines += [f"  {label:<11} {base}{path}" for label, path in PAGES]
    return lines


def addresses(base: str, public_url: str, *, derived: bool) -> dict[str, str]:
    """The same, as the fields of a log event, where the logs are JSON lines."""
    fields = {"url": base, "public_url": public_url, "public_url_from": _origin(derived)}
    return fields | {path.strip("/"): f"{base}{path}" for _, path in PAGES}
