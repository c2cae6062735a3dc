"""The dashboard's pages: short function views over selectors and services.

Every view requires a login and reads through selectors scoped to the signed-in user
(`runs.access`). Deciding a gate needs the approver role in the run's project and
submitting a run the runner role: the services check both; the views only decide
what to offer (a form, a button) to whom.
"""
