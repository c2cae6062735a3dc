"""Session-wide test settings.

Runs made with `evaluate()` and no explicit store keep to memory during tests, so
no test writes into a data folder by accident; the tests of recording by default
turn it back on explicitly (OLOPROOF_RECORD=1) in a subprocess with its own data
folder.
"""

import os
import signal
from collections.abc import Iterator

import pytest
from hypothesis import settings

os.environ["OLOPROOF_RECORD"] = "0"

# The suite's verdict depends on the tree, not on the draw: the generated-input tests
# draw the same examples on every run. HYPOTHESIS_PROFILE=explore draws new ones, to
# look for inputs nobody has tried yet.
settings.register_profile("suite", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

# The OpenAI-compatible stand-in server: fixtures `fake_openai` and `models_on`.
pytest_plugins = (
    "tests.support.fake_openai_fixtures",
    "tests.support.optimize_fixtures",
)


@pytest.fixture(autouse=True)
def _ctrl_c_as_it_was() -> Iterator[None]:
    """Every test leaves Ctrl-C's handling as it found it.

    An ignored SIGINT survives `exec`: a test process that was left ignoring it would
    start every later command ignoring Ctrl-C, and the tests of Ctrl-C would wait for
    a command that can never hear it.
    """
    before = signal.getsignal(signal.SIGINT)
    yield
    if signal.getsignal(signal.SIGINT) is not before and before is not None:
        signal.signal(signal.SIGINT, before)
