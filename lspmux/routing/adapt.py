"""Answers fitted to what a client can take, for backends initialized with more than it declared.

A backend shared by several clients is initialized with lspmux's own (rich) client capabilities;
its answers then go through these adapters, one per client capability, before reaching a
client that declared less:

- `textDocument.{definition,declaration,typeDefinition,implementation}.linkSupport` missing:
  `LocationLink[]` becomes `Location[]` (`locations_from_links`);
- markdown not among `hover.contentFormat`, `completionItem.documentationFormat` or
  `signatureInformation.documentationFormat`: markdown becomes plain text
  (`markdown_to_plaintext`, keeping code and link text, dropping the markup);
- `completionItem.snippetSupport` missing: snippet items become plain text
  (`snippet_to_text`, `insertTextFormat` 2 → 1).

What an answer is fitted as is its method's route's (`Route.fit`, one of this module's kinds:
"completion", "hover", "signatureHelp", "definition", …). `needs_adapting(kind, client)` says
whether an answer must be parsed at all (the hot path relays most answers unparsed);
`adapt(kind, result, client)` returns the fitted answer. All functions take and return raw
dicts and never modify their input. `routing/fit_raw.py` fits a server's raw answer to the same
result without parsing what needs no change. This module imports nothing of lspmux's or
lsprotocol's: the fitting worker process imports it and must start in milliseconds.
"""

from __future__ import annotations

import copy
import html
import re
from collections.abc import Callable, Mapping
from typing import Any

# The fitting kinds. A route declares one (`Route.fit`, by the family that owns its method): the
# section of the client's `textDocument` capabilities that says what its answers may hold. The
# kind, not the method, is what this module and the fitting worker are handed: no method name
# is spelled below the families and the table.
COMPLETION = "completion"  # a completion list, or a resolved item (`completionItem`)
HOVER = "hover"
SIGNATURE_HELP = "signatureHelp"
#: Answers that are locations: the section's `linkSupport` says whether links may stay.
LINK_KINDS = frozenset(["definition", "declaration", "typeDefinition", "implementation"])
#: Every kind a route may declare.
KINDS = frozenset([COMPLETION, HOVER, SIGNATURE_HELP, *LINK_KINDS])

SNIPPET = 2
PLAIN_TEXT = 1


def _get(caps: Mapping[str, Any], *path: str) -> Any:
    node: Any = caps
    for part in path:
        node = node.get(part) if isinstance(node, Mapping) else None
    return node


def _markdown_ok(formats: Any) -> bool:
    """Markdown only for a client that lists it (a server told no formats sends plain text)."""
    return isinstance(formats, list) and "markdown" in formats


# -- what the client lacks ---------------------------------------------------------------------


def lacks_link_support(client: Mapping[str, Any], kind: str) -> bool:
    return kind in LINK_KINDS and not _get(client, "textDocument", kind, "linkSupport")


def lacks_snippets(client: Mapping[str, Any]) -> bool:
    return not _get(client, "textDocument", "completion", "completionItem", "snippetSupport")


def lacks_markdown(client: Mapping[str, Any], kind: str) -> bool:
    if kind == HOVER:
        return not _markdown_ok(_get(client, "textDocument", "hover", "contentFormat"))
    if kind == COMPLETION:
        path = ("textDocument", "completion", "completionItem", "documentationFormat")
        return not _markdown_ok(_get(client, *path))
    if kind == SIGNATURE_HELP:
        path = ("textDocument", "signatureHelp", "signatureInformation", "documentationFormat")
        return not _markdown_ok(_get(client, *path))
    return False


def needs_adapting(kind: str, client: Mapping[str, Any]) -> bool:
    """Whether answers of fitting `kind` may hold something this client did not declare."""
    if kind in LINK_KINDS:
        return lacks_link_support(client, kind)
    if kind == COMPLETION:
        return lacks_snippets(client) or lacks_markdown(client, kind)
    return lacks_markdown(client, kind)


def adapt(kind: str, result: Any, client: Mapping[str, Any]) -> Any:
    """`result` (an answer of fitting `kind`) fitted to the client; unchanged when nothing
    must be."""
    if result is None or not needs_adapting(kind, client):
        return result
    adapter = _ADAPTERS.get(kind)
    return adapter(result, client) if adapter is not None else result


# -- locations ------------------------------------------------------------------------------------


def locations_from_links(result: Any) -> Any:
    """`Location | Location[] | LocationLink[] | null` with every `LocationLink` turned into the
    `Location` of its target (the selection range: the name, where an editor puts the cursor)."""
    if isinstance(result, list):
        out: list[Any] = []
        for item in result:
            loc = _location(item)
            if loc not in out:
                out.append(loc)
        return out
    return _location(result) if isinstance(result, Mapping) else result


def _location(item: Any) -> Any:
    if isinstance(item, Mapping) and "targetUri" in item:
        rng = item.get("targetSelectionRange") or item.get("targetRange")
        return {"uri": item["targetUri"], "range": copy.deepcopy(rng)}
    return copy.deepcopy(item)


# -- markup ------------------------------------------------------------------------------------------

_FENCE = re.compile(r"^\s*(```|~~~)")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")
_QUOTE = re.compile(r"^\s{0,3}>\s?")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
CODE_SPAN = _CODE = re.compile(r"(`+)(.+?)\1")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(
    r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?!\*)|(?<![\w_])_(?=\S)(.+?)(?<=\S)_(?!\w)"
)
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_PRIVATE = 0xE000
_SET_ASIDE = re.compile("[\ue021-\ue07e]")


#: What a line's first character must be for a block rule (fence, rule, heading, quote) to apply.
_BLOCK_MARKS = frozenset("`~-*_#>")


def markdown_to_plaintext(text: str) -> str:
    """Markdown as a reader would see it rendered: code blocks keep their code (fences
    dropped), headings, rules, quotes, emphasis, inline code marks, link and image syntax and
    backslash escapes go, entities are decoded. Blank lines collapse to one."""
    split = text.splitlines()
    if len(split) == 1:  # most documentation in a list: one line, no block markup
        line = split[0]
        head = line.lstrip()[:1]
        if head and head not in _BLOCK_MARKS:
            plain = _inline(line)
            return plain if plain.strip() else ""
    return _blocks(split)


def _blocks(split: list[str]) -> str:
    """`markdown_to_plaintext` of the lines `split`, line by line (the general path)."""
    lines: list[str] = []
    in_code = False
    for line in split:
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            lines.append(line)
            continue
        if _RULE.match(line):
            lines.append("")
            continue
        lines.append(_inline(_QUOTE.sub("", _HEADING.sub("", line))))
    out: list[str] = []
    for line in lines:
        if line.strip() or (out and out[-1].strip()):
            out.append(line.rstrip() if not line.strip() else line)
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out)


#: Characters inline markdown rules look at: a line without them is its own plain text.
_INLINE_MARKS = frozenset("\\<>[]!*_`&")


def _inline(line: str) -> str:
    if _INLINE_MARKS.isdisjoint(line):
        return line
    parts = _CODE.split(line)  # [text, ticks, code, text, ticks, code, ...]
    out: list[str] = []
    for i in range(0, len(parts), 3):
        segment = parts[i]
        if not _INLINE_MARKS.isdisjoint(segment):  # most text between code spans has none
            # escaped characters are set aside (as private-use characters) so no rule reads them
            segment = _ESCAPE.sub(lambda m: chr(_PRIVATE + ord(m.group(1))), segment)
            segment = _BREAK.sub("\n", segment)
            segment = _LINK.sub(r"\1", _IMAGE.sub(r"\1", segment))
            segment = _STRONG.sub(r"\2", segment)
            segment = _EMPHASIS.sub(lambda m: m.group(1) or m.group(2), segment)
            segment = _SET_ASIDE.sub(lambda m: chr(ord(m.group()) - _PRIVATE), segment)
            segment = html.unescape(segment)
        out.append(segment)
        if i + 2 < len(parts):
            out.append(parts[i + 2])
    return "".join(out)


def plain_markup(value: Any) -> Any:
    """A `MarkupContent` or `MarkedString`(s) as plaintext `MarkupContent`; plain strings (a
    documentation field's plain form) and plaintext content stay as they are."""
    if isinstance(value, dict) and "kind" in value:
        if value.get("kind") != "markdown":
            return dict(value)
        return {"kind": "plaintext", "value": markdown_to_plaintext(str(value.get("value", "")))}
    if isinstance(value, list):  # MarkedString[]
        texts = [_marked(v) for v in value]
        return {"kind": "plaintext", "value": "\n\n".join(x for x in texts if x)}
    if isinstance(value, dict) and "language" in value:  # MarkedString with a language
        return {"kind": "plaintext", "value": _marked(value)}
    return value


def _marked(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("value", ""))  # code: kept as it is
    return markdown_to_plaintext(str(value))


# -- snippets -------------------------------------------------------------------------------------

_TABSTOP = re.compile(r"\$(\d+|[A-Za-z_][A-Za-z0-9_]*)")
_BRACED = re.compile(r"\$\{(\d+|[A-Za-z_][A-Za-z0-9_]*)")


def snippet_to_text(snippet: str) -> str:
    """The text a snippet inserts with every placeholder at its default: tabstops and
    variables without a default vanish, `${1:x}` and `${VAR:x}` give `x`, a choice its first
    option, a transform nothing; escapes are resolved; anything malformed stays literal."""
    text, _ = _snippet(snippet, 0, nested=False)
    return text


def _snippet(s: str, i: int, *, nested: bool) -> tuple[str, int]:
    out: list[str] = []
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s) and s[i + 1] in "$}\\":
            out.append(s[i + 1])
            i += 2
        elif nested and c == "}":
            break
        elif c == "$" and (got := _dollar(s, i)) is not None:
            out.append(got[0])
            i = got[1]
        else:
            out.append(c)
            i += 1
    return "".join(out), i


def _dollar(s: str, i: int) -> tuple[str, int] | None:
    braced = _BRACED.match(s, i)
    if braced is None:
        simple = _TABSTOP.match(s, i)
        return ("", simple.end()) if simple else None
    j = braced.end()
    nxt = s[j] if j < len(s) else ""
    if nxt == "}":
        return "", j + 1
    if nxt == ":":
        inner, k = _snippet(s, j + 1, nested=True)
        return (inner, k + 1) if k < len(s) else None
    if nxt == "|" and braced.group(1).isdigit():
        end = s.find("|}", j + 1)
        if end < 0:
            return None
        first = re.split(r"(?<!\\),", s[j + 1 : end])[0]
        return re.sub(r"\\([,|$}\\])", r"\1", first), end + 2
    if nxt == "/":  # a transform: ${VAR/regex/format/options}
        k, slashes = j, 0
        while k < len(s) and (slashes < 3 or s[k] != "}"):
            if s[k] == "\\":
                k += 1
            elif s[k] == "/":
                slashes += 1
            k += 1
        return ("", k + 1) if k < len(s) else None
    return None


def plain_completion_item(item: Mapping[str, Any], default_format: Any = None) -> dict[str, Any]:
    """A completion item that inserts plain text: a snippet's `insertText`, `textEdit.newText`
    and `textEditText` (the item's format, else the list's `default_format`) become their
    plain text."""
    if item.get("insertTextFormat", default_format) != SNIPPET:
        return dict(item)  # nothing to rewrite: a shallow copy (deep ones cost 12k items 0.3 s)
    out = dict(item)
    if isinstance(out.get("insertText"), str):
        out["insertText"] = snippet_to_text(out["insertText"])
    if isinstance(out.get("textEditText"), str):
        out["textEditText"] = snippet_to_text(out["textEditText"])
    edit = out.get("textEdit")
    if isinstance(edit, dict) and isinstance(edit.get("newText"), str):
        out["textEdit"] = edit = dict(edit)
        edit["newText"] = snippet_to_text(edit["newText"])
    if "insertText" not in out and "textEdit" not in out and "textEditText" not in out:
        out["insertText"] = snippet_to_text(str(out.get("label", "")))
    out["insertTextFormat"] = PLAIN_TEXT
    return out


# -- per kind -------------------------------------------------------------------------------------


def _completion_item(
    item: Any, no_snippets: bool, no_markdown: bool, default_format: Any = None
) -> Any:
    if not isinstance(item, dict):
        return item
    out = plain_completion_item(item, default_format) if no_snippets else dict(item)
    if no_markdown and "documentation" in out:
        out["documentation"] = plain_markup(out["documentation"])
    return out


def _completion(result: Any, client: Mapping[str, Any]) -> Any:
    no_snippets = lacks_snippets(client)  # asked once per answer, not once per item
    no_markdown = lacks_markdown(client, COMPLETION)
    if isinstance(result, list):
        return [_completion_item(i, no_snippets, no_markdown) for i in result]
    if not isinstance(result, Mapping) or "items" not in result:
        return _completion_item(result, no_snippets, no_markdown)  # completionItem/resolve
    out = dict(result)
    defaults = dict(out.get("itemDefaults") or {})
    fmt = defaults.get("insertTextFormat")
    items = out.get("items") or []
    out["items"] = [_completion_item(i, no_snippets, no_markdown, fmt) for i in items]
    if fmt == SNIPPET and no_snippets:
        defaults["insertTextFormat"] = PLAIN_TEXT
        out["itemDefaults"] = defaults
    return out


def _hover(result: Any, _client: Mapping[str, Any]) -> Any:
    if not isinstance(result, Mapping) or "contents" not in result:
        return result
    contents = result["contents"]
    if isinstance(contents, str):  # a MarkedString: markdown
        contents = [contents]
    return {**result, "contents": plain_markup(contents)}


def _signature_help(result: Any, _client: Mapping[str, Any]) -> Any:
    if not isinstance(result, Mapping):
        return result
    out = copy.deepcopy(dict(result))
    for sig in out.get("signatures") or []:
        if "documentation" in sig:
            sig["documentation"] = plain_markup(sig["documentation"])
        for param in sig.get("parameters") or []:
            if "documentation" in param:
                param["documentation"] = plain_markup(param["documentation"])
    return out


def _links(result: Any, _client: Mapping[str, Any]) -> Any:
    return locations_from_links(result)


_ADAPTERS: dict[str, Callable[[Any, Mapping[str, Any]], Any]] = {
    COMPLETION: _completion,
    HOVER: _hover,
    SIGNATURE_HELP: _signature_help,
    **dict.fromkeys(LINK_KINDS, _links),
}
