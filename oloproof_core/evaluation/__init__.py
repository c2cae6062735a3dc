"""One evaluation run, in the order it happens: planned (`plan`), its cases executed and
judged in its processes (`run`, `processes`), recorded as it goes or sequential in
batches, then concluded (`aggregate`, `conclusion`).
"""
