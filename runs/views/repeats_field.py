"""The New-run form's Repeats field: a whole number of runs per case, or auto."""

from __future__ import annotations

from typing import Any

from django import forms

import oloproof_core as engine


class RepeatsField(forms.Field):
    """`repeats`: a whole number of runs per case, or auto (docs/repeats.md)."""

    widget = forms.TextInput

    def __init__(self, *, most: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.most = most

    def to_python(self, value: Any) -> int | str | None:
        text = "" if value is None else str(value).strip()
        if not text:
            return None
        if engine.is_auto(text):
            return engine.AUTO
        outside = f"repeats must be a whole number from 1 to {self.most}, or auto"
        if not text.isdigit():
            raise forms.ValidationError(f"{outside}, e.g. 3")
        if not 1 <= int(text) <= self.most:
            reason = (
                "each case runs at least once"
                if int(text) < 1
                else (f"beyond {self.most}, more cases serve a run better")
            )
            raise forms.ValidationError(f"{outside}: {reason}")
        return int(text)
