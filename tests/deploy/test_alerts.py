"""deploy/prometheus/alerts.yaml: every rule is complete and asks about metrics clarigate really exposes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Any

import pytest
import yaml
from prometheus_client.metrics import MetricWrapperBase

from clarigate.gateway.runtime import metrics
from tests.deploy.k8s_objects import DEPLOY

RULES: list[dict[str, Any]] = [
    rule
    for group in yaml.safe_load((DEPLOY / "prometheus" / "alerts.yaml").read_text())["groups"]
    for rule in group["rules"]
]
#: Rules about the scrape itself: a replica that is down exposes no clarigate metric at all.
SCRAPE_RULES = {"ClarigateTargetDown": "up"}
#: Labels Prometheus adds to every scraped series.
TARGET_LABELS = {"instance", "job"}
#: Series each metric type exposes, by suffix of the family name.
SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_count", "_sum", "_created"),
    "gauge": ("",),
    "summary": ("", "_count", "_sum", "_created"),
    "info": ("_info",),
}


def exposed_series() -> dict[str, tuple[str, ...]]:
    """Every series name defined in gateway/runtime/metrics.py -> the label names it carries (``bot`` too)."""
    series: dict[str, tuple[str, ...]] = {}
    for metric in vars(metrics).values():
        if isinstance(metric, MetricWrapperBase):
            for family in metric.describe():
                for suffix in SUFFIXES.get(family.type, ("",)):
                    # every series gets the bot label at exposition (gateway/runtime/ops.py)
                    labels = ("bot", *metric._labelnames) + (("le",) if suffix == "_bucket" else ())
                    series[family.name + suffix] = labels
    return series


def test_the_metrics_module_defines_what_the_rules_are_checked_against() -> None:
    assert "clarigate_runs_total" in exposed_series()


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r["alert"])
def test_rule_is_complete(rule: dict[str, Any]) -> None:
    assert re.fullmatch(r"Clarigate[A-Z]\w+", rule["alert"])
    assert re.fullmatch(r"\d+[smhd]", rule["for"]), "a `for` keeps one bad scrape from paging"
    assert rule["labels"]["severity"] in {"page", "warn", "info"}
    assert rule["annotations"]["summary"] and rule["annotations"]["description"]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r["alert"])
def test_rule_asks_about_series_clarigate_exposes(rule: dict[str, Any]) -> None:
    series = exposed_series()
    expr = rule["expr"]
    named = set(re.findall(r"\bclarigate_\w+", expr))
    if rule["alert"] in SCRAPE_RULES:
        assert re.match(rf"\s*{SCRAPE_RULES[rule['alert']]}\{{", expr)
        return
    assert named, "every other rule is about clarigate's own metrics"
    assert named <= set(series), f"not exposed by gateway/runtime/metrics.py: {sorted(named - set(series))}"
    for name, matchers in re.findall(r"\b(clarigate_\w+)\{([^}]*)\}", expr):
        for label in re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", matchers):
            assert label in series[name], f"{name} has no label {label}"
    for grouping in re.findall(r"\bby\s*\(([^)]*)\)", expr):
        for label in (part.strip() for part in grouping.split(",")):
            if label in TARGET_LABELS:
                continue
            assert all(label in series[name] for name in named), f"cannot group {sorted(named)} by {label}"


def test_silence_alerts_fire_when_the_counters_are_not_there_at_all() -> None:
    """Labelled counters appear only at their first increment: after a restart into a broken
    webhook or token there is no series, and ``sum(...) == 0`` alone would never be true."""
    silence = [  # counters compared with 0 (a gauge at 0, a loop down, is a value that is there)
        r for r in RULES if re.search(r"\)\s*\)?\s*==\s*0\b", r["expr"]) and "increase(" in r["expr"]
    ]
    assert silence, "expected at least the inbound-stopped rule"
    for rule in silence:
        current = rule["expr"].split(" and ")[0]
        # ``or vector(0)`` (no grouping) or ``or <yesterday's series> * 0`` (keeps the bot label)
        assert re.search(r"\bor\s+(vector\(0\)|[^\n]*\*\s*0)\s*\)\s*==\s*0", current), rule["alert"]


@pytest.mark.parametrize("rule", [r for r in RULES if " / " in r["expr"]], ids=lambda r: r["alert"])
def test_ratio_alerts_need_enough_events_to_mean_something(rule: dict[str, Any]) -> None:
    """A share computed from one or two events (one failed run, one late click) is noise, not an alert."""
    volume = re.search(r"\band\s+sum\b[^\n]*\bincrease\(clarigate_\w+[^\n]*\)\s*>=?\s*(\d+)", rule["expr"])
    assert volume, "a ratio needs a minimum count of events beside it"
    assert int(volume.group(1)) >= 3


@pytest.mark.parametrize(
    "rule", [r for r in RULES if r["alert"] not in SCRAPE_RULES], ids=lambda r: r["alert"]
)
def test_rule_works_per_bot(rule: dict[str, Any]) -> None:
    """Several bots share one Prometheus: every aggregation keeps the bot apart."""
    for grouping in re.findall(r"\b(sum|max|min|avg)\b\s*(by\s*\(([^)]*)\))?\s*\(", rule["expr"]):
        assert grouping[1] and "bot" in [p.strip() for p in grouping[2].split(",")], rule["expr"]


def promtool() -> str:
    """The promtool binary (CI installs Debian's ``prometheus`` package, which ships it)."""
    found = shutil.which("promtool")
    if found is None:
        if os.environ.get("REQUIRE_PROMTOOL"):
            pytest.fail("promtool is required here (REQUIRE_PROMTOOL is set) but not installed")
        pytest.skip("promtool is not installed (apt-get install prometheus)")
    return found


def test_promtool_accepts_the_rules() -> None:
    result = subprocess.run(
        [promtool(), "check", "rules", "alerts.yaml"],
        cwd=DEPLOY / "prometheus",
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_rules_unit_tests_pass() -> None:
    """deploy/prometheus/alerts.test.yaml: each alert fires for the bot in trouble, not the other."""
    result = subprocess.run(
        [promtool(), "test", "rules", "alerts.test.yaml"],
        cwd=DEPLOY / "prometheus",
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
