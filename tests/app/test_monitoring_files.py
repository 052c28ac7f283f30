"""deploy/prometheus and deploy/grafana against the code: promtool accepts the rules, their
tests and the scrape configuration (when promtool is installed: Debian's `prometheus`
package), every alert names its severity and a runbook section of docs/operations.md, and
every metric the rules and the dashboard read, with every label they select or group by, is
one a real /metrics scrape serves, so the files cannot drift from the code."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from pixgate.runtime import Runtime
from tests.app.scrapes import allow_loopback_webhooks, cash_out, hooked_account, series_labels
from tests.support import drain
from tests.webhooks.receiver import Receiver

ROOT = Path(__file__).resolve().parents[2]
PROMETHEUS = ROOT / "deploy" / "prometheus"
DASHBOARD = ROOT / "deploy" / "grafana" / "pixgate-dashboard.json"
OPERATIONS = ROOT / "docs" / "operations.md"
PROMTOOL = shutil.which("promtool")

TARGET_LABELS = {"job", "instance"}
"""Labels Prometheus adds to every series it scrapes."""
SELECTOR = re.compile(r"\b(pixgate_[a-z0-9_]+)\s*(?:\{([^}]*)\})?")
MATCHER = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)")
GROUPING = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")


def _rules() -> list[dict[str, Any]]:
    groups = yaml.safe_load((PROMETHEUS / "alerts.yml").read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def _panel_exprs(panels: list[dict[str, Any]]) -> Iterator[str]:
    for panel in panels:
        yield from (target["expr"] for target in panel.get("targets", []))
        yield from _panel_exprs(panel.get("panels", []))


def _dashboard() -> dict[str, Any]:
    dashboard: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return dashboard


def _exprs() -> list[str]:
    dashboard = _dashboard()
    variables = [v["definition"] for v in dashboard["templating"]["list"] if "definition" in v]
    return [rule["expr"] for rule in _rules()] + list(_panel_exprs(dashboard["panels"])) + variables


@pytest.mark.skipif(PROMTOOL is None, reason="promtool is not installed (Debian: prometheus)")
@pytest.mark.parametrize(
    "command",
    [
        ("check", "rules", "alerts.yml"),
        ("test", "rules", "alerts.test.yml"),
        ("check", "config", "prometheus.yml"),
    ],
    ids=" ".join,
)
def test_promtool_accepts_them(command: tuple[str, ...]) -> None:
    assert PROMTOOL is not None
    done = subprocess.run(
        [PROMTOOL, *command], cwd=PROMETHEUS, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_alert_has_a_severity_a_summary_and_a_runbook() -> None:
    headings = {
        "#" + re.sub(r"[^a-z0-9 -]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        for line in OPERATIONS.read_text().splitlines()
        if line.startswith("#")
    }
    rules = _rules()
    assert len(rules) >= 10
    for rule in rules:
        assert rule["labels"]["severity"] in {"warning", "critical"}, rule["alert"]
        assert rule["annotations"]["summary"], rule["alert"]
        page, _, anchor = rule["annotations"]["runbook"].partition("#")
        assert page == "docs/operations.md" and f"#{anchor}" in headings, rule["alert"]


def test_every_dashboard_panel_reads_the_chosen_prometheus() -> None:
    dashboard = _dashboard()
    assert dashboard["uid"] and dashboard["title"]
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    assert {p["datasource"]["uid"] for p in panels} == {"${datasource}"}
    assert len({p["id"] for p in dashboard["panels"]}) == len(dashboard["panels"])


async def test_rules_and_dashboard_read_only_what_metrics_serve(
    rt: Runtime, client: httpx.AsyncClient, receiver: Receiver
) -> None:
    """After a cash-out settled and its webhook delivered (so every labelled family has a
    series to show its label names), a scrape declares every metric and label used."""
    await allow_loopback_webhooks(rt)
    await cash_out(client, await hooked_account(client, rt, receiver))
    await drain(rt)
    declared = series_labels((await client.get("/metrics")).text)

    for expr in _exprs():
        used = [(name, matchers) for name, matchers in SELECTOR.findall(expr)]
        assert used or expr.startswith("up{"), expr
        served: set[str] = set(TARGET_LABELS | {"le"})
        for name, matchers in used:
            assert name in declared, f"{name} is not served ({expr})"
            selected = set(MATCHER.findall(matchers)) - TARGET_LABELS
            assert selected <= declared[name], f"{name}: {selected - declared[name]} ({expr})"
            served |= declared[name]
        grouped = {g.strip() for group in GROUPING.findall(expr) for g in group.split(",")}
        assert grouped - {""} <= served, f"grouped by {grouped - served} ({expr})"
