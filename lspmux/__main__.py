"""`python -m lspmux` is the `lspmux` command (the console script's `lspmux.cli:main`)."""

import sys

from lspmux.cli import main

# lspmux.cli imports only the shim before it reads the command: an editor waits for the client
# at every start, and a user for `lspmux status` and the agent verbs.
sys.exit(main())
