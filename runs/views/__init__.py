"""The dashboard's pages: short function views over selectors and services.

Every view requires a login. Deciding a gate needs `runs.approve_gate` and
submitting a run `runs.add_run`: the services check both; the views only decide
what to offer (a form, a button) to whom.
"""
