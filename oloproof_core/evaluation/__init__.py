"""One evaluation run, in the order it happens: planned, executed and judged (`run`),
recorded as it goes, sequential in batches, then concluded from its columns.
"""
