"""`python -m lspmux` is the `lspmux` command."""

import sys

from lspmux.daemon.shim import run_if_client

# The shim first, before lspmux.cli and its imports: an editor waits for it at every start.
code = run_if_client(sys.argv[1:])
if code is None:
    from lspmux.cli import main

    code = main()
sys.exit(code)
