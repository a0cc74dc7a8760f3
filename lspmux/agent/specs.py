"""The tool table: every agent tool's name, description (written for a model), arguments and
implementing function. One table serves both faces: the MCP server builds each tool's
`inputSchema` from it, the command line its verbs; `call` checks the arguments and runs the
tool. Importing this module is cheap: tool modules load when a tool runs. What a tool is and
how its arguments are checked: tool_types.py.
"""

from __future__ import annotations

from lspmux.agent.errors import ToolError
from lspmux.agent.tool_types import (
    APPLY,
    AT,
    AT_DOC,
    CHECK,
    FILE,
    FILE_DOC,
    SYMBOL,
    Arg,
    Tool,
    check_arguments,
    goto_tool,
    input_schema,
    symbol_edit_tool,
)

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the verbs import the table at start
if TYPE_CHECKING:
    from typing import Any

__all__ = ["AT_DOC", "TOOLS", "Arg", "Tool", "call", "check_arguments", "input_schema"]

TOOLS: dict[str, Tool] = {
    t.name: t
    for t in (
        goto_tool(
            "definition",
            "definition",
            "Use it to jump from a use to where a name is defined, across files and into "
            "libraries: at='src/app.py:12:16' or at='src/app.py:Greeter.greet@return <|>message'.",
        ),
        goto_tool(
            "type_definition",
            "type definition",
            "Use it to find the class/type of a variable or expression: "
            "at='src/app.py:main@greeter = <|>Greeter'.",
        ),
        goto_tool(
            "implementation",
            "implementation",
            "Use it to find the implementations of an interface, abstract method or protocol: "
            "at='src/shapes.py:Shape.area'.",
        ),
        goto_tool(
            "declaration",
            "declaration",
            "Use it where declaration and definition differ (C/C++ headers): "
            "at='src/hello.c:main@<|>greet('.",
        ),
        Tool(
            "references",
            "tools:references",
            "Find every reference to the symbol at a position, across the workspace (waits "
            "for the servers to finish loading the project first). Example: "
            "at='src/app.py:Greeter.greet'. Returns 'Found N reference(s)' (the total, even "
            "when the list is cut at `limit`) and one 'path:line:col  source line' each.",
            (
                AT,
                SYMBOL,
                Arg(
                    "include_declaration",
                    "boolean",
                    "Include the declaration(s) of the symbol (default true); false lists "
                    "only the uses.",
                    default=True,
                ),
                Arg("limit", "integer", "At most this many references (default 100).", default=100),
            ),
        ),
        Tool(
            "hover",
            "tools:hover",
            "The type signature and documentation of the symbol at a position, as plain text. "
            "Example: at='src/app.py:12:16'.",
            (AT, SYMBOL),
        ),
        Tool(
            "symbols",
            "tools:symbols",
            "The outline of one file: its classes, functions, methods, variables as a tree "
            "(indented), each 'kind name  path:line:col'. Example: file='src/app.py'.",
            (FILE,),
        ),
        Tool(
            "workspace_symbols",
            "tools:workspace_symbols",
            "Search symbols by name across the whole workspace (fuzzy, as the servers match), "
            "merged and de-duplicated over every server. Example: query='Greeter'. Returns "
            "'kind name (in container)  path:line:col' per symbol.",
            (
                Arg("query", "string", "Part of a symbol name, e.g. 'Greet'.", required=True),
                Arg("limit", "integer", "At most this many symbols (default 100).", default=100),
            ),
        ),
        Tool(
            "diagnostics",
            "checking:diagnostics",
            "Errors and warnings of a file, a glob such as 'src/**/*.py', or '*' (the whole "
            "workspace) from every language server and linter (type checker, ruff, clangd, "
            "...), merged and fresh for the files' current text on disk. Returns "
            "'path:line:col severity source code message' per problem. 'OK' only when every "
            "source of every file checked it; otherwise 'not checked by SOURCE: why' (not "
            "installed, with the install command; crashed, with its stderr; still analysing).",
            (
                Arg(
                    "file",
                    "string",
                    "A file or glob relative to the root; '*' or '**' for the whole workspace.",
                    required=True,
                ),
                Arg(
                    "severity",
                    "string",
                    "Minimum severity to show: error, warning, information or hint (default).",
                    default="hint",
                ),
                Arg(
                    "timeout",
                    "integer",
                    "Seconds to wait for every source (default 60); a source still working "
                    "then is reported as not having checked the file.",
                    default=60,
                ),
            ),
        ),
        Tool(
            "check_edit",
            "speculation:check_edit",
            "Check an edit before writing it: the new text is shown to every language server "
            "and linter of the files as an unsaved change, their diagnostics collected, the "
            "old text restored. Returns the problems the edit would introduce and the ones it "
            "would fix ('path:line:col severity source code message'); nothing is written. Give "
            "the edit one way: at + new_text (at='src/app.py:main@<|>x = 1<|>' replaces the "
            "marked range, a symbol 'src/app.py:Greeter.greet' the whole symbol, a position "
            "inserts), diff (a unified diff, several files allowed), or edits (a list).",
            (
                Arg("at", "string", AT_DOC + " With `new_text`: what to replace."),
                Arg("new_text", "string", "The text that replaces what `at` matches."),
                Arg("diff", "string", "A unified diff ('--- a/path', '+++ b/path', '@@' hunks)."),
                Arg(
                    "edits",
                    "array",
                    "A list of {file, range, new_text} (LSP range, 0-based, as the tools' "
                    "structured results give it) or {at, new_text}, over one or more files.",
                ),
                Arg(
                    "timeout",
                    "integer",
                    "Seconds to wait for every source (default 60).",
                    default=60,
                ),
            ),
        ),
        Tool(
            "rename",
            "edit_tools:rename",
            "Rename the symbol at a position everywhere (all files). Returns a unified diff "
            "('--- a/path' / '+++ b/path') of every file touched; nothing is written unless "
            "apply=true. Example: at='src/app.py:Greeter', new_name='Welcomer'.",
            (
                AT,
                Arg("new_name", "string", "The new name.", required=True),
                SYMBOL,
                APPLY,
                CHECK,
            ),
            writes=True,
        ),
        Tool(
            "rename_file",
            "edit_tools:rename_file",
            "Move or rename a file, with the import updates the servers compute "
            "(workspace/willRenameFiles). Returns a diff; with apply=true the edits are "
            "written, the file moved and the servers told. Example: from='src/util.py', "
            "to='src/helpers.py'.",
            (
                Arg("from", "string", "The file to move, relative to the root.", required=True),
                Arg("to", "string", "Its new path, relative to the root.", required=True),
                APPLY,
                CHECK,
            ),
            writes=True,
        ),
        Tool(
            "code_actions",
            "edit_tools:code_actions",
            "Quick fixes and refactorings available at a position or range (fix a diagnostic, "
            "organize imports, extract, ...). Lists 'index: [kind] title'. With apply=<index> "
            "or a title substring the action is resolved, its edit written (shown as a diff) "
            "and its command run. Example: at='src/app.py:1:8', kind='quickfix'; a Locate "
            "range: at='src/app.py:main@<|>x = 1<|>'.",
            (
                AT,
                SYMBOL,
                Arg("kind", "string", "Only actions of this kind: quickfix, refactor, source..."),
                Arg(
                    "apply",
                    "string|integer",
                    "The action to apply: its index in the list or a part of its title.",
                ),
                CHECK,
            ),
            writes=True,
        ),
        Tool(
            "format",
            "edit_tools:format",
            "Format a file with its formatter (ruff, clang-format via clangd, ...). Returns a "
            "unified diff; nothing is written unless apply=true. Example: file='src/app.py'.",
            (
                FILE,
                APPLY,
                CHECK,
            ),
            writes=True,
        ),
        Tool(
            "call_hierarchy",
            "tools:call_hierarchy",
            "Who calls the function at a position (incoming) or what it calls (outgoing); one "
            "line per call: 'name  path:line:col  source line'. Example: "
            "at='src/app.py:Greeter.greet', direction='incoming'.",
            (
                AT,
                SYMBOL,
                Arg(
                    "direction",
                    "string",
                    "'incoming' (callers, default) or 'outgoing' (callees).",
                    default="incoming",
                ),
            ),
        ),
        Tool(
            "source",
            "symbol_tools:source",
            "The source text of a symbol, with its decorators and docstring, and its range: "
            "at='src/app.py:Greeter.greet' (a Locate symbol path), or any position inside "
            "it (the innermost symbol there). Returns 'name  path:line:col-line:col' and the "
            "text.",
            (AT, SYMBOL),
        ),
        symbol_edit_tool(
            "replace_symbol",
            "Replace a whole symbol (function, class, method — decorators and docstring "
            "included, as `source` shows it) by new_text; `source`'s text, changed, is what "
            "it takes. Example: at='src/app.py:Greeter.greet', new_text='    def greet(self) "
            '-> str:\\n        return "hi"\'.',
            "The symbol's new text, from the start of its first line (indentation included).",
        ),
        symbol_edit_tool(
            "insert_before",
            "Insert whole lines before a symbol's first line (its decorators, if any). "
            "Example: at='src/app.py:main', new_text='def helper() -> int:\\n    return 1\\n\\n\\n'.",
            "The lines to insert (a line break is added at the end when missing).",
        ),
        symbol_edit_tool(
            "insert_after",
            "Insert whole lines after a symbol's last line. Example: at='src/app.py:Greeter', "
            "new_text='\\n\\nclass Other:\\n    pass'.",
            "The lines to insert (a line break is added at the end when missing).",
        ),
        Tool(
            "safe_delete",
            "symbol_edits:safe_delete",
            "Delete a symbol (its whole text and line) only when nothing outside it "
            "references it; otherwise list the references and change nothing. Returns a diff "
            "(apply=true writes it). Example: at='src/app.py:unused_helper'.",
            (AT, SYMBOL, APPLY, CHECK),
            writes=True,
        ),
        Tool(
            "type_hierarchy",
            "symbol_tools:type_hierarchy",
            "The supertypes (base classes) and subtypes (derived classes) of the type at a "
            "position, where the file's server serves type hierarchy (clangd does; "
            "basedpyright does not: the error says so). Example: at='src/shapes.cpp:Square'. "
            "One 'kind name  path:line:col' per type.",
            (
                AT,
                SYMBOL,
                Arg(
                    "direction",
                    "string",
                    "'supertypes', 'subtypes' or 'both' (default).",
                    default="both",
                ),
            ),
        ),
        Tool(
            "explore",
            "compound:explore",
            "Everything about the symbol at a position in one call: its hover (type and "
            "docs), definition, every caller with every call site, how many references it "
            "has, and its source. Example: at='src/app.py:Greeter.greet'.",
            (AT, SYMBOL),
        ),
        Tool(
            "batch",
            "compound:batch",
            "Several tool calls in one, run in order, each answered with its own result or "
            "error (one failing does not stop the others). Example: calls=[{'tool': 'hover', "
            "'arguments': {'at': 'src/app.py:12:16'}}, {'tool': 'diagnostics', 'arguments': "
            "{'file': 'src/app.py'}}].",
            (
                Arg(
                    "calls",
                    "array",
                    "The calls: a list of {tool, arguments} (at most 50; no nested batch).",
                    required=True,
                ),
            ),
        ),
        Tool(
            "locate",
            "tools:locate",
            "Turn a description into an exact position: a Locate string "
            "'<file>[:<symbol.path or line>][@<text with <|> marker>]', e.g. "
            "'src/app.py:Greeter.greet@return <|>message'. Returns 'path:line:col  source line' "
            "(or a range with range=true). Errors list the nearest symbols or lines.",
            (
                Arg("at", "string", "A Locate string (or path:line:col).", required=True),
                Arg("range", "boolean", "Return the matched range (default false).", default=False),
            ),
        ),
        Tool(
            "describe",
            "tools:describe",
            "The shortest Locate string for a position (the reverse of locate), to refer to a "
            "place robustly after edits. Example: at='src/app.py:12:16' → "
            "'src/app.py:Greeter.greet@return <|>message'.",
            (AT, SYMBOL),
        ),
        Tool(
            "status",
            "admin_tools:status",
            "Which language servers serve this workspace (state, pid, memory, open files) and "
            "which needed servers are missing, with how to install them.",
            (),
        ),
        Tool(
            "reload",
            "admin_tools:reload",
            "Restart the language servers of this workspace (after installing packages or "
            "changing configuration); open files are given to the new servers.",
            (Arg("file", "string", "Optional: a file whose servers should restart."),),
        ),
        Tool(
            "capabilities",
            "admin_tools:capabilities",
            "What each language server of a file (or of the workspace) supports.",
            (Arg("file", "string", "Optional: only the servers of this file."),),
        ),
        Tool(
            "request",
            "admin_tools:request",
            "Send any LSP request through lspmux and get the raw JSON answer (positions are "
            "0-based, UTF-16). `at` fills textDocument and position, `file` textDocument. "
            "Example: method='textDocument/documentHighlight', at='src/app.py:12:16'.",
            (
                Arg("method", "string", "The LSP method.", required=True),
                Arg("params", "object", "The request's params (JSON object)."),
                Arg("at", "string", AT_DOC),
                Arg("file", "string", FILE_DOC),
                SYMBOL,
            ),
        ),
    )
}


async def call(lsp: Any, name: str, arguments: dict[str, Any] | None) -> Any:
    """Run tool `name` on the session; a `Result`, or ToolError."""
    tool = TOOLS.get(name)
    if tool is None:
        raise ToolError(f"no tool {name!r}; the tools are: {', '.join(TOOLS)}")
    return await tool.function()(lsp, **check_arguments(tool, arguments))
