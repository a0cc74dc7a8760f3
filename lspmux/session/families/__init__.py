"""The method families: each module declares the routes of one family of LSP methods, with
direct references to the functions that serve them; `routing/table.py` assembles them.

Each family module exports up to four dicts, one per direction — `REQUESTS`, `NOTIFICATIONS`
(client → server), `SERVER_REQUESTS`, `SERVER_NOTIFICATIONS` (server → client) — mapping a
method name to its `Route`. What a method does is said here: the modules that dispatch
(`session/dispatch.py`, `session/forward.py`, `session/exchange.py`, `backends/pool.py`, the
table) name no method (tests/unit/routing/test_routing_families.py checks it), and what lspmux
asks or tells itself under a method is sent by its family (Locate's documentSymbol, the
diagnostics pulls, the user's messages). The few modules below the families that still spell
a method name are listed there, each with its reason (`SPELL_METHODS`).

A route also says where its params and result hold positions (`params_shape`,
`result_shape`: shapes of `encodings/shapes.py`), so a server in another encoding is converted
for by the family's own declaration.

Handler signatures, by direction (see `routing/route.py`):

- client request, `local`/`diagnostics`: `handler(session, ex)` → the answer (or an awaitable);
- client request forwarded by a family (`first`/`merge`/`origin`): `handler(ex, route, backends)`;
- client notification: `handler(session, params)` (raises `InvalidParams` for malformed params);
- server request: `instance(pool, backend, msg, reply)` once per server instance, then
  `handler(relay, route, backend, msg, reply)` in each session that hears of it;
- server notification: `instance(pool, backend, msg)`, then `handler(relay, backend, msg)`.
"""
