"""`python -m lspmux` is the `lspmux` command."""

import sys

from lspmux.cli import main

sys.exit(main())
