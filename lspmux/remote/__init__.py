"""Reaching a daemon on another machine: `lspmux client --remote ssh://host/path`.

`target` says how to run a command on the far side (OpenSSH, or any `--remote-exec` command
that gives stdio), `mapping` rewrites paths and URIs between the two sides, and `relay` is the
local end: it carries the editor's LSP through the transport, keeps each open document's text,
and reconnects (replaying the session) when the link drops. See docs/remote.md.
"""
