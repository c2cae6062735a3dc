"""`python -m oloproof ...` is the `oloproof` command (used to start the embedded worker)."""

import sys

from oloproof.cli import main

sys.exit(main())
