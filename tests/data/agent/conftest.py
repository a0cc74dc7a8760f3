"""tests/data/agent holds real projects' sources (MarkupSafe 3.0.2, with its own tests) for
the agent tools to read: they are data, not tests of lspmux, so pytest never collects them."""

collect_ignore = ["markupsafe"]
