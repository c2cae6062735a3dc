"""Run configs (`oloproof.yaml`): the schema, the checks of shape and files, and the code
they name, read in a sandboxed probe (`code/`).
"""
