"""C through clangd and JavaScript through Biome's language server, both real, via lspmux proxy."""

from __future__ import annotations

from lsprotocol import types as t

from tests.e2e.conftest import Proxy, sources

#: Only the servers under test for .js (typescript-language-server is not installed by the
#: test setup; with it, both would answer, which other tests cover for Python).
JS_CONFIG = """
[servers.typescript-language-server]
disabled = true
"""


async def test_clangd_diagnostics_and_a_custom_method_are_forwarded(proxy: Proxy) -> None:
    uri = proxy.open("hello.c", "c")
    diags = await proxy.diagnostics_where(uri, lambda ds: "clang" in sources(ds))
    assert any("totl" in d.message for d in diags)
    # textDocument/switchSourceHeader is clangd's own method: lspmux does not know it and
    # forwards it untouched to the file's server.
    result = await proxy.request("textDocument/switchSourceHeader", {"uri": uri})
    assert result == proxy.uri("hello.h")


async def test_clangd_definition_reaches_the_header(proxy: Proxy) -> None:
    uri = proxy.open("hello.c", "c")
    await proxy.diagnostics_where(uri, lambda ds: "clang" in sources(ds))
    result = await proxy.client.text_document_declaration_async(
        t.DeclarationParams(t.TextDocumentIdentifier(uri), t.Position(line=5, character=17))
    )
    assert result
    targets = {getattr(x, "target_uri", None) or getattr(x, "uri", None) for x in result}
    assert proxy.uri("hello.h") in targets


async def test_biome_language_server_reports_javascript_problems(proxy_factory) -> None:  # type: ignore[no-untyped-def]
    proxy: Proxy = await proxy_factory(config=JS_CONFIG)
    uri = proxy.open("test.js", "javascript")
    diags = await proxy.diagnostics_where(uri, lambda ds: "biome" in sources(ds))
    codes = {str(d.code) for d in diags}
    assert any("noDebugger" in c for c in codes), codes
