"""Locate: positions and ranges described by meaning (scope + find) instead of columns.

- `spec`     the data model (Target, Spec, Scope) and the JSON object form
- `syntax`   the string form `<file>[:<scope>][@<find>]`
- `markers`  which `<|>`-style marker marks the position
- `pattern`  the token-aware matcher
- `fuzzy`    near matches when the exact find matches nothing (opt-in), over `align` (the
             token edit distance) and `anchors` (where to look)
- `symbols`  document symbols as a tree; symbol paths
- `engine`   resolve_spec: (text, symbols, spec, encoding) → position or range
- `describe` the reverse: the shortest spec for a position
- `methods`  locate/resolve, locate/resolveRange, locate/describe and `locate` inside any
             request, over a LocateHost

See docs/locate.md.
"""
