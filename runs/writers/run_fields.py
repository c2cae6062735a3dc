"""The columns of a recorded run derived from its result: policy, times, counts."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.utils import timezone

import oloproof_core as engine
from runs.models import Run


def policy_fields(policy: Any) -> dict[str, str]:
    """The policy columns of a run from the policy its provenance names."""
    if policy is None:
        return {"policy_digest": "", "policy_text": ""}
    if isinstance(policy, Mapping):
        text = policy.get("text")
        text = text if isinstance(text, str) else engine.canonical_json(policy)
        digest = policy.get("digest")
        digest = digest if isinstance(digest, str) else engine.digest_text(text)
    else:
        text = str(policy)
        digest = engine.digest_text(text)
    return {"policy_digest": digest[:64], "policy_text": text}


def parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def finished_run_fields(result: engine.Result, finished_at: datetime | None) -> dict[str, Any]:
    provenance = result.provenance
    return {
        "status": Run.Status.SUCCEEDED,
        "split": (provenance.get("dataset") or {}).get("split"),
        "cases_total": len(result.cases),
        "cases_done": len(result.cases),
        "cases_failed": sum(1 for case in result.cases if case.error is not None),
        "config": {"system": (provenance.get("system") or {}).get("import_path")},
        "provenance": provenance,
        "confidence": float(provenance.get("confidence") or 0.95),
        "started_at": parse_time(provenance.get("started_at")),
        "finished_at": finished_at or timezone.now(),
        "duration_s": provenance.get("duration_s"),
        **policy_fields(provenance.get("policy")),
    }
