"""Configuration: the typed model (`model`) and TOML loading and merging (`loader`)."""
