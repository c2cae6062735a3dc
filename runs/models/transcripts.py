"""A case's transcript: every model call and step of the system, kept compressed.

A table of its own, written by `runs.writers.transcripts`, read one case at a time by
the case page: a transcript can be a thousand times a case's output, and the tables
pages and figures scan (`CaseResult`) stay as narrow as they were.
"""

from __future__ import annotations

from django.db import models

from runs.models.runs import Run


class CaseTranscript(models.Model):
    """One case's transcript as zlib-compressed canonical JSON, with its counts beside it.

    (run, case_id) is unique, so a chunk of work recorded twice keeps one transcript.
    """

    # No index of its own: the unique (run, case_id) one leads with it.
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="+", db_index=False)
    case_id = models.CharField(max_length=500)
    compressed = models.BinaryField()
    digest = models.CharField(max_length=64)
    """The transcript's content digest, the one the verdict cache keys on."""
    steps = models.PositiveIntegerField(default=0)
    model_calls = models.PositiveIntegerField(default=0)
    cut = models.BooleanField(default=False)
    """Whether the caps cut anything (the transcript says what)."""

    class Meta:
        constraints = (
            models.UniqueConstraint(fields=["run", "case_id"], name="case_transcript_unique"),
        )

    def __str__(self) -> str:
        return f"transcript of {self.case_id} in run {self.run_id}"
