"""The demo's last lines: where to look first in the history it recorded.

Read from the store as it is after recording (a second `oloproof demo` tells the same
story, with whatever was decided since): the run that waits for a decision, the run
whose gate failed and why, the approved baseline, and a comparison to open.
"""

from __future__ import annotations

from runs.access import LOCAL
from runs.models import Approval, Gate, Run
from runs.selectors.gates import gates_pending


def demo_story(*, url: str) -> list[str]:
    """Lines for the terminal: each a job the dashboard does on the demo's data."""
    base = url.rstrip("/")
    lines = []
    pending = gates_pending(user=LOCAL).first()
    if pending is not None:
        run = pending.run
        lines.append(
            f"decide    {_release(run)} (run {run.pk}) {_outcome(pending)} its gate and waits "
            f"for an approver: {base}/gates/"
        )
    failed = (
        Gate.objects.filter(outcome=Gate.Outcome.FAIL)
        .select_related("run__release__system")
        .order_by("-run_id")
        .first()
    )
    if failed is not None:
        run = failed.run
        lines.append(
            f"failed    {_release(run)} (run {run.pk}): {_failed_rules(failed)}; its cases: "
            f"{base}/runs/{run.pk}/cases/"
        )
    approved = (
        Approval.objects.filter(decision="approve", revocation__isnull=True)
        .select_related("gate__run__release__system")
        .order_by("-created_at")
        .first()
    )
    if approved is not None:
        baseline = approved.gate.run
        lines.append(f"baseline  {_release(baseline)} (run {baseline.pk}), approved")
        latest = (
            Run.objects.filter(dataset_id=baseline.dataset_id).order_by("-pk").first()
            if baseline.dataset_id is not None
            else None
        )
        if latest is not None and latest.pk != baseline.pk:
            lines.append(
                f"compare   {_release(baseline)} with {_release(latest)}: "
                f"{base}/compare/?baseline={baseline.pk}&candidate={latest.pk}"
            )
    return ["where to look first", *(f"  {line}" for line in lines)] if lines else []


def _release(run: Run) -> str:
    release = run.release
    return f"{release.system.name}@{release.version}" if release is not None else f"run {run.pk}"


def _outcome(gate: Gate) -> str:
    return {"pass": "passed", "fail": "failed"}.get(gate.outcome, "could not decide")


def _failed_rules(gate: Gate) -> str:
    """The gate's failing rules, as its summary words them (`missing ≤ 3% fail (…)`)."""
    parts = [part.strip() for part in gate.summary.partition(":")[2].split(";")]
    failing = [part for part in parts if " fail" in part]
    return "gate failed on " + "; ".join(failing) if failing else "gate failed"
