"""The writers: one module per table (or set of tables written together), the only code
that changes them; `services` holds the actions pages and the API call.
"""
