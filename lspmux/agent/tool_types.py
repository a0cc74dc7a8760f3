"""What an agent tool is — its name, description (written for a model), arguments and
implementing function — and how its arguments become an MCP `inputSchema` and are checked
before the function runs. The table of tools is specs.py.
"""

from __future__ import annotations

from lspmux.agent.errors import ToolError

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the verbs import the table at start
if TYPE_CHECKING:
    from typing import Any

AT_DOC = (
    "Where: a Locate string 'src/app.py:Greeter.greet@return <|>message' (file, optional "
    "dotted symbol scope, text after @ with <|> marking the spot), or 'src/app.py:12:16' "
    "(1-based line and column in characters), or 'src/app.py:12' with `symbol`. Paths are "
    "relative to the workspace root. Every location the tools print can be pasted back here."
)
SYMBOL_DOC = (
    "With an `at` of the form 'path:line': the text to put the position on, e.g. 'message' "
    "(the first occurrence on that line); 'message#2' for the second."
)
FILE_DOC = "A file path relative to the workspace root, e.g. 'src/app.py'."


class Arg:
    """One argument of a tool (plain slots, not a NamedTuple: `typing` costs the verbs ms)."""

    __slots__ = ("default", "doc", "name", "required", "type")

    def __init__(
        self, name: str, type: str, doc: str, required: bool = False, default: Any = None
    ) -> None:
        self.name = name
        self.type = type  # JSON schema type: string, integer, boolean, object, "string|integer"
        self.doc = doc
        self.required = required
        self.default = default


class Tool:
    """One tool: its name, implementing function, description and arguments."""

    __slots__ = ("args", "description", "name", "target", "writes")

    def __init__(
        self, name: str, target: str, description: str, args: tuple[Arg, ...], writes: bool = False
    ) -> None:
        self.name = name
        self.target = target  # "module:function" under lspmux.agent
        self.description = description
        self.args = args
        self.writes = writes

    def function(self) -> Any:
        found = _FUNCTIONS.get(self.target)
        if found is None:
            import importlib  # here: a verb that the daemon runs never calls a function

            module, func = self.target.split(":")
            found = _FUNCTIONS[self.target] = getattr(
                importlib.import_module(f"lspmux.agent.{module}"), func
            )
        return found


_FUNCTIONS: dict[str, Any] = {}


AT = Arg("at", "string", AT_DOC, required=True)
SYMBOL = Arg("symbol", "string", SYMBOL_DOC)
FILE = Arg("file", "string", FILE_DOC, required=True)
APPLY = Arg("apply", "boolean", "Write the change (default false: preview).", default=False)
CHECK = Arg(
    "check",
    "boolean",
    "Also report the problems the change introduces in the files it touches (only new "
    "ones; a preview shows what it would introduce). Default true; false skips the wait.",
    default=True,
)


def goto_tool(name: str, what: str, example: str) -> Tool:
    return Tool(
        name,
        f"tools:{name}",
        f"Find the {what} of the symbol at a position (answers of every language server for "
        f"the file, merged). {example} Returns 'Found N {what}(s)' and one "
        "'path:line:col  source line' per result.",
        (AT, SYMBOL),
    )


def symbol_edit_tool(name: str, description: str, text_doc: str) -> Tool:
    return Tool(
        name,
        f"symbol_edits:{name}",
        description + " Returns a unified diff; nothing is written unless apply=true (then "
        "atomically, refused when the file changed or another client has it unsaved).",
        (AT, Arg("new_text", "string", text_doc, required=True), SYMBOL, APPLY, CHECK),
        writes=True,
    )


_PY_NAMES = {"from": "from_"}
_JSON_TYPES = {
    "string": (str,),
    "integer": (int,),
    "boolean": (bool,),
    "object": (dict, str),
    "array": (list, str),
    "string|integer": (str, int),
}


def input_schema(tool: Tool) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for arg in tool.args:
        kinds = arg.type.split("|")
        schema: dict[str, Any] = {"description": arg.doc}
        schema["type"] = kinds if len(kinds) > 1 else kinds[0]
        if arg.type == "array":
            schema["items"] = {"type": "object"}
        if arg.default is not None:
            schema["default"] = arg.default
        props[arg.name] = schema
    required = [a.name for a in tool.args if a.required]
    return {"type": "object", "properties": props, "required": required}


def check_arguments(tool: Tool, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """Keyword arguments for the tool function: unknown, missing and mistyped arguments
    refused with a message naming the accepted ones."""
    given = dict(arguments or {})
    known = {a.name: a for a in tool.args}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise ToolError(
            f"{tool.name}: unknown argument(s) {', '.join(unknown)}; accepted: "
            f"{', '.join(known) or 'none'}"
        )
    kwargs: dict[str, Any] = {}
    for arg in tool.args:
        value = given.get(arg.name)
        if value is None:
            if arg.required:
                raise ToolError(f"{tool.name}: `{arg.name}` is required. {arg.doc}")
            continue
        types = _JSON_TYPES[arg.type]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise ToolError(f"{tool.name}: `{arg.name}` must be {arg.type}, got {value!r}")
        kwargs[_PY_NAMES.get(arg.name, arg.name)] = value
    return kwargs
