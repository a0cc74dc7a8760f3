"""lspmux: a language-server multiplexing proxy."""

__version__ = "0.1.0"
