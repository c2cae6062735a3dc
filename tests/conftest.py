"""Session-wide test settings.

Runs made with `evaluate()` and no explicit store keep to memory during tests, so
no test writes into a data folder by accident; the tests of recording by default
turn it back on explicitly (OLOPROOF_RECORD=1) in a subprocess with its own data
folder.
"""

import os

os.environ["OLOPROOF_RECORD"] = "0"

# The OpenAI-compatible stand-in server: fixtures `fake_openai` and `models_on`.
pytest_plugins = (
    "tests.support.fake_openai_fixtures",
    "tests.support.optimize_fixtures",
)
