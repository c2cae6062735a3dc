"""The dashboard's pages: short function views over selectors and services.

Every view requires a login; deciding a gate also needs `runs.approve_gate` and
submitting a run `runs.add_run` (checked by the services and the views alike).
"""
