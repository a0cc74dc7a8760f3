"""`lspmux install`: servers and linters from PyPI and npm, into lspmux's own prefix.

The recipe of each server is its `package` field in the built-in table (config/defaults.toml):
`"pypi:ruff==0.17.6"` or `"npm:pyright@1.1.414"`, a list when a server needs more than one
package. Each server gets its own folder under `$XDG_DATA_HOME/lspmux/servers/NAME` (a Python
venv for PyPI packages, an npm prefix for npm ones) and its executables are linked into
`$XDG_DATA_HOME/lspmux/bin`, which `lspmux.config.resolve.resolve_command` searches before PATH.

This package imports only the standard library and attrs at its top: `prefix` is read on every
command resolution.
"""
