"""Server requests lspmux answers for the client: `workspace/configuration` (the instance's
first client answers, as the Rust lspmux has it, each item merged under the server's configured
`settings`: the configuration wins a conflict; the settings alone when no client can answer)
and `workspace/workspaceFolders` (the instance's root)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lspmux.backends import capabilities as caps
from lspmux.routing import methods as lsp
from lspmux.routing.route import Policy, Route, route
from lspmux.session.relay import relay_request
from lspmux.wire.messages import Message

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend
    from lspmux.backends.pool import Pool, Reply


def configuration(pool: Pool, backend: Backend, msg: Message, reply: Reply) -> None:
    params = msg.get("params")
    items = params.get("items") if isinstance(params, dict) else None
    items = items if isinstance(items, list) else []
    configured = [configuration_item(backend.config.settings, it) for it in items]

    def merged(answer: Any) -> None:
        if not isinstance(answer, list) or len(answer) != len(items):
            reply(configured)
            return
        reply(
            [
                client if ours is None else caps.merge_init_options(client, ours)
                for client, ours in zip(answer, configured, strict=True)
            ]
        )

    session = pool.first_client(backend)
    if session is None:
        merged(None)
        return
    session.backend_request(backend, msg, merged)


def configuration_item(settings: Mapping[str, Any], item: Any) -> Any:
    """Answer one `workspace/configuration` item from a server's settings: the dotted
    `section` looked up in the settings tree; the whole tree without a section."""
    section = item.get("section") if isinstance(item, Mapping) else None
    if not section:
        return dict(settings)
    node: Any = settings
    for part in str(section).split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def workspace_folders(pool: Pool, backend: Backend, msg: Message, reply: Reply) -> None:
    reply([{"uri": backend.root.as_uri(), "name": backend.root.name or str(backend.root)}])


SERVER_REQUESTS: dict[str, Route] = {
    lsp.WORKSPACE_CONFIGURATION: route(
        Policy.ANSWER,
        "sync",
        handler=relay_request,
        instance=configuration,
        client_capability="workspace.configuration",
    ),
    lsp.WORKSPACE_WORKSPACE_FOLDERS: route(Policy.ANSWER, "sync", instance=workspace_folders),
}
