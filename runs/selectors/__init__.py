"""Reads from the runs app, one module per concept.

- `runs.selectors.runs`: run history, one run, progress, recorded configs;
- `runs.selectors.cases`: a run's cases, filtered and paged in the database;
- `runs.selectors.results`: the one builder of an engine `Result` from a recorded run;
- `runs.selectors.comparison`: the paired comparison of two runs (API and pages alike);
- `runs.selectors.gates`: gates, approvals and baselines;
- `runs.selectors.releases`: systems and their releases over time;
- `runs.selectors.accounts`: whether the store has accounts yet.

Every read is bounded: a page of runs or cases costs a fixed number of queries
whatever the history or the run size.
"""
