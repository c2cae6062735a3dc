"""JsonSchema: the output is valid against a JSON Schema, given or read from `expected`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from oloproof_core._util.text_files import read_text
from oloproof_core.cases.verdict import PASSED, Verdict
from oloproof_core.errors import ContractError, DeclarationError
from oloproof_core.judging.evaluators._base import Evaluator
from oloproof_core.judging.evaluators._case_view import CaseView
from oloproof_core.judging.evaluators._fields import pick


class JsonSchema(Evaluator):
    """Passes when the output (parsed first if it is a JSON string) satisfies the schema.

    Give `schema=` (a dict, or a path to a .json file), or `expected_field=` to read
    each case's schema from its expected object.
    """

    def __init__(
        self,
        *,
        criterion: str = "json_schema",
        schema: Mapping[str, Any] | str | None = None,
        field: str | None = None,
        expected_field: str | None = None,
        per_turn: bool = False,
    ) -> None:
        if (schema is None) == (expected_field is None):
            raise DeclarationError(
                f"JsonSchema(criterion={criterion!r}) needs exactly one "
                "of schema=... or expected_field='name'"
            )
        reads = ("output",) if schema is not None else ("output", "expected")
        super().__init__(criterion=criterion, reads=reads, per_turn=per_turn)
        self.schema = _load_schema(schema, criterion) if schema is not None else None
        self.field = field
        self.expected_field = expected_field

    def parameters(self) -> dict[str, Any]:
        return {"schema": self.schema, "field": self.field, "expected_field": self.expected_field}

    def judge(self, case: CaseView) -> Verdict:
        schema = self.schema
        if schema is None:
            schema = pick(case.expected, self.expected_field, "the expected object")
            if not isinstance(schema, Mapping):
                raise ContractError(
                    f"expected[{self.expected_field!r}] must be a JSON Schema object"
                )
        value = pick(case.output, self.field, "the output")
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                return Verdict(value=0.0, feedback=f"The output is not valid JSON: {exc}.")
        import jsonschema  # imported by the runs that check schemas, not by every run

        error = jsonschema.exceptions.best_match(
            jsonschema.validators.validator_for(schema)(schema).iter_errors(value)
        )
        if error is None:
            return PASSED
        where = "/".join(str(part) for part in error.absolute_path) or "the top level"
        return Verdict(value=0.0, feedback=f"Schema violation at {where}: {error.message}.")


def _load_schema(schema: Mapping[str, Any] | str, criterion: str) -> dict[str, Any]:
    if isinstance(schema, str):
        owner = f"JsonSchema(criterion={criterion!r})"
        text = read_text(
            schema, error=lambda said: DeclarationError(f"{owner}: {said}"), what="the schema file"
        )
        try:
            schema = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise DeclarationError(
                f"{owner}: cannot read schema file {schema!r}: {_json_reason(exc)}"
            ) from None
    if not isinstance(schema, Mapping):
        raise DeclarationError(f"JsonSchema(criterion={criterion!r}): a schema is an object")
    schema = dict(schema)
    import jsonschema

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        raise DeclarationError(
            f"JsonSchema(criterion={criterion!r}): invalid schema: {exc.message}"
        ) from None
    return schema


def _json_reason(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"line {exc.lineno}: {exc.msg}"
    return "nested too deeply"
