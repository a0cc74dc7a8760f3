"""What a client is told when its server cannot start (`lifecycle.ServerLife.start_failure`)."""

from __future__ import annotations


def start_failure_message(name: str, argv: list[str], why: str, stderr: list[str]) -> str:
    """The error a client gets when its server cannot start: what failed, the server's own
    words (its last stderr lines), and what to do."""
    command = " ".join(argv)
    out = [f"lspmux: the language server {name} ({command}) could not start: {why}."]
    if stderr:
        out.append("Its stderr ended with:")
        out.extend(f"  {line}" for line in stderr[-10:])
    told = "\n".join(stderr)
    if "rustup" in told or "Unknown binary" in told:
        out.append(
            "This is rustup's proxy without the component: run `rustup component add "
            "rust-analyzer`, or point the server at a rust-analyzer binary."
        )
    out.append(
        f"Run `{command}` in a terminal to see it fail, fix or install the server (or name "
        "another one), then reconnect."
    )
    return "\n".join(out)
