"""The runs app's tables, one module per concept, all importable from `runs.models`."""

from runs.models.annotations import CaseAnnotation, CaseAnnotationChange, Rating
from runs.models.audit import Change
from runs.models.chunks import RunChunk
from runs.models.datasets import Dataset, DatasetCase
from runs.models.gates import Approval, ApprovalRevocation, Gate
from runs.models.keeping import RunKeeping, RunTag
from runs.models.labels import Label
from runs.models.optimizations import (
    Optimization,
    OptimizationCandidate,
    OptimizationEvaluation,
    OptimizationReflection,
)
from runs.models.projects import DEFAULT_PROJECT_SLUG, ROLE_RANK, CodeRoot, Membership, Project
from runs.models.runs import CaseResult, Run
from runs.models.systems import Release, System
from runs.models.tokens import ApiToken
from runs.models.transcripts import CaseTranscript

__all__ = [
    "DEFAULT_PROJECT_SLUG",
    "ROLE_RANK",
    "ApiToken",
    "Approval",
    "ApprovalRevocation",
    "CaseAnnotation",
    "CaseAnnotationChange",
    "CaseResult",
    "CaseTranscript",
    "Change",
    "CodeRoot",
    "Dataset",
    "DatasetCase",
    "Gate",
    "Label",
    "Membership",
    "Optimization",
    "OptimizationCandidate",
    "OptimizationEvaluation",
    "OptimizationReflection",
    "Project",
    "Rating",
    "Release",
    "Run",
    "RunChunk",
    "RunKeeping",
    "RunTag",
    "System",
]
