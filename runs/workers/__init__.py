"""The worker side: planning a queued run, its chunks, finalising it, the sweep of lost
work, dispatching tasks, and optimizations at work.
"""
