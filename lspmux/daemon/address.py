"""Where the daemon listens and how a client proves it may talk to it (stdlib only).

Responsible for: parsing and formatting addresses (`unix:PATH`, `tcp:HOST:PORT`), the default
socket path (`$XDG_RUNTIME_DIR/lspmux/lspmux.sock`, else `<tmp>/lspmux-<uid>/lspmux.sock`),
creating and checking the private directory that holds the socket and its lock files (0700,
owned by the user; anything else is refused), loopback checks for TCP, who is on the other
end of a loopback TCP connection (`peer_uid`: on Linux, the connection's owner in
`/proc/net/tcp` and `/proc/net/tcp6`), and loading the TCP token (`--token-file`, a 0600 file,
or `LSPMUX_TOKEN`), which a peer of the daemon's own user does not need where its uid can be
checked.

The shim imports this module, so it must import nothing beyond the standard library.
"""

from __future__ import annotations

import os
import stat

from lspmux.dirs import runtime_dir as default_dir
from lspmux.dirs import runtime_dir_name, user_config_file_name

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs milliseconds
if TYPE_CHECKING:  # pathlib too (~5 ms): a client finds the daemon with strings
    from collections.abc import Mapping
    from pathlib import Path
    from typing import TypeVar

    PathT = TypeVar("PathT", str, Path)  # `private_dir` gives back what it was given

SOCKET_NAME = "lspmux.sock"
TOKEN_ENV = "LSPMUX_TOKEN"
ADDRESS_ENV = "LSPMUX_ADDRESS"
#: sun_path holds 108 bytes on Linux (104 on macOS), with the terminating NUL.
MAX_SOCKET_PATH = 103


class AddressError(ValueError):
    """An address that cannot be parsed or must not be used; the message says why."""


class Address:
    """A parsed address: kind "unix" (with `path`) or "tcp" (with `host` and `port`)."""

    __slots__ = ("host", "kind", "path", "port")

    def __init__(self, kind: str, path: str = "", host: str = "", port: int = 0) -> None:
        self.kind = kind
        self.path = path
        self.host = host
        self.port = port

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Address) and str(other) == str(self)

    def __hash__(self) -> int:
        return hash(str(self))

    def __repr__(self) -> str:
        return f"Address({str(self)!r})"

    def __str__(self) -> str:
        if self.kind == "unix":
            return f"unix:{self.path}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"tcp:{host}:{self.port}"

    @property
    def is_unix(self) -> bool:
        return self.kind == "unix"

    def lock_path(self, name: str) -> Path:
        """A lock file beside the socket (for TCP: in the default private directory)."""
        from pathlib import Path

        if self.is_unix:
            return Path(f"{self.path}.{name}")
        return default_dir() / f"tcp-{self.host}-{self.port}.{name}"


def parse(text: str) -> Address:
    """`unix:PATH`, `tcp:HOST:PORT` (`tcp:[::1]:PORT` for IPv6), a bare absolute path, or a
    bare `HOST:PORT` (as the Rust lspmux writes it: `127.0.0.1:27631`, `[::1]:27631`)."""
    if text.startswith("unix:"):
        path = text[5:]
        if not path:
            raise AddressError(
                f"{text!r}: unix: needs a path, e.g. unix:/run/user/1000/lspmux.sock"
            )
        return Address("unix", path=os.path.abspath(os.path.expanduser(path)))
    if text.startswith("tcp:"):
        rest = text[4:]
        if rest.startswith("["):
            host, sep, port = rest[1:].partition("]:")
        else:
            host, sep, port = rest.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise AddressError(f"{text!r}: expected tcp:HOST:PORT, e.g. tcp:127.0.0.1:27631")
        return Address("tcp", host=host, port=int(port))
    if text.startswith("/"):
        return Address("unix", path=text)
    host, sep, port = text.rpartition(":")
    if sep and host and port.isdigit() and "/" not in host:
        return parse(f"tcp:{text}")
    raise AddressError(f"{text!r}: expected unix:PATH or tcp:HOST:PORT")


#: What a `listen` / `connect` value of the configuration file may be.
CONFIG_FORMS = (
    '["127.0.0.1", 27631] (TCP), "/path/to/lspmux.sock" (a Unix socket), or '
    '"unix:PATH" / "tcp:HOST:PORT"'
)


def from_config(value: object) -> Address:
    """A `listen` / `connect` value of the configuration file, in the Rust lspmux's forms (a
    `[HOST, PORT]` pair, or an absolute socket path) or lspmux's (`unix:PATH`,
    `tcp:HOST:PORT`). Raises AddressError saying what was wrong."""
    if isinstance(value, list):
        if len(value) == 2 and isinstance(value[0], str) and value[0]:
            port = value[1]
            if isinstance(port, int) and not isinstance(port, bool) and 0 < port < 65536:
                return Address("tcp", host=value[0], port=port)
        raise AddressError(f"{value!r} is not a [HOST, PORT] pair with a port from 1 to 65535")
    if isinstance(value, str):
        if value.startswith(("unix:", "tcp:")):
            return parse(value)
        path = os.path.expanduser(value)
        if not os.path.isabs(path):
            raise AddressError(f"{value!r}: a socket path must be absolute")
        return Address("unix", path=path)
    raise AddressError(f"found {type(value).__name__}")


def is_loopback(host: str) -> bool:
    import ipaddress  # only the daemon asks; the shim must start fast

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def default_address(environ: Mapping[str, str] | None = None) -> Address:
    return Address("unix", path=os.path.join(runtime_dir_name(environ), SOCKET_NAME))


def configured_connect(environ: Mapping[str, str] | None = None) -> str | None:
    """The user file's `connect` (where clients find the daemon), as an address string; None
    when the file or the key is absent. Read without the configuration loader (a client must
    start fast); AddressError names the file and the key when the value cannot be used."""
    path = user_config_file_name()
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if b"connect" not in data:  # parsing TOML costs the client ~15 ms: only when it may say
        return None
    import tomllib

    try:
        value = tomllib.loads(data.decode("utf-8")).get("connect")
    except (ValueError, UnicodeDecodeError) as exc:
        raise AddressError(f"{path}: invalid TOML: {exc}") from None
    if value is None:
        return None
    try:
        return str(from_config(value))
    except AddressError as exc:
        raise AddressError(f"{path}: connect: {exc}; expected {CONFIG_FORMS}") from None


def resolve(
    text: str | None, environ: Mapping[str, str] | None = None, configured: str | None = None
) -> Address:
    """The address given on the command line, else `$LSPMUX_ADDRESS`, else the configuration
    file's (`configured`: `listen` for the daemon, `connect` for a client), else the default."""
    env = os.environ if environ is None else environ
    text = text or env.get(ADDRESS_ENV) or configured or None
    return parse(text) if text else default_address(env)


def private_dir(path: PathT) -> PathT:
    """Create `path` (mode 0700) if needed and check it is private: a directory, not a link,
    owned by this user, with no group or other permission bits. Raises AddressError."""
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise AddressError(f"cannot create {path}: {exc.strerror}") from exc
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise AddressError(f"{path} is not a directory; refusing to put the socket there")
    if st.st_uid != os.getuid():
        raise AddressError(
            f"{path} belongs to uid {st.st_uid}, not to you (uid {os.getuid()}); "
            "refusing to put the socket there"
        )
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o077:
        raise AddressError(
            f"{path} has mode {mode:04o}: other users could reach the socket. "
            f"Remove it or run `chmod 700 {path}`"
        )
    return path


def check_socket_dir(address: Address) -> None:
    """For a unix address: its folder must be private (created when it is missing), and the
    path short enough for a socket."""
    if address.is_unix:
        if len(os.fsencode(address.path)) > MAX_SOCKET_PATH:
            raise AddressError(
                f"{address.path} is too long for a Unix socket (at most {MAX_SOCKET_PATH} "
                "bytes); choose a shorter path with --listen/--connect unix:PATH"
            )
        from pathlib import Path

        private_dir(Path(address.path).parent)


def load_token(
    token_file: str | Path | None, environ: Mapping[str, str] | None = None
) -> str | None:
    """The TCP token: from `token_file` (which must not be readable by others), else
    `$LSPMUX_TOKEN`, else None."""
    env = os.environ if environ is None else environ
    if token_file is not None:
        from pathlib import Path

        path = Path(token_file)
        try:
            st = path.stat()
        except OSError as exc:
            raise AddressError(f"cannot read the token file {path}: {exc.strerror}") from exc
        if stat.S_IMODE(st.st_mode) & 0o077:
            raise AddressError(
                f"the token file {path} is readable by other users; run `chmod 600 {path}`"
            )
        token = path.read_text().strip()
        if not token:
            raise AddressError(f"the token file {path} is empty")
        return token
    token = env.get(TOKEN_ENV, "").strip()
    return token or None


def check_replaceable(path: str) -> None:
    """What may stand at a socket path the daemon is about to bind: nothing, or a socket
    (then the caller checks nobody listens on it). A regular file, folder or link is
    someone's data, never deleted: AddressError says so."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a socket"
        raise AddressError(
            f"{path} exists and is {kind}; lspmux replaces only a stale socket there. Move it "
            "away, or choose another address with --listen unix:PATH"
        )


def resolve_client(text: str | None, environ: Mapping[str, str] | None = None) -> Address:
    """Where a client finds the daemon: `--connect`, else `$LSPMUX_ADDRESS`, else the user
    file's `connect` (read only when neither is given), else the default socket."""
    env = os.environ if environ is None else environ
    configured = None if text or env.get(ADDRESS_ENV) else configured_connect(env)
    return resolve(text, env, configured)


# -- who is on the other end of a loopback TCP connection ----------------------------------------

#: Where Linux lists the TCP sockets of this network namespace, with the uid owning each.
PROC_NET_TCP = ("/proc/net/tcp", "/proc/net/tcp6")


def peer_uid_checkable() -> bool:
    """Whether this system tells the uid of a loopback TCP peer (Linux's /proc/net/tcp): then
    the daemon's own user needs no token on TCP."""
    return os.path.exists(PROC_NET_TCP[0])


def peer_uid(
    local: tuple[str, int], remote: tuple[str, int], tables: tuple[str, ...] = PROC_NET_TCP
) -> int | None:
    """The uid owning the other end of a loopback TCP connection the daemon accepted: the
    socket whose own address is `remote` (the peer's host and port) and whose peer is `local`
    (the daemon's side). None when it cannot be found (not Linux, not on this machine, gone)."""
    for table in tables:
        try:
            with open(table, encoding="ascii", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        uid = uid_in_table(text, own=remote, peer=local)
        if uid is not None:
            return uid
    return None


def uid_in_table(text: str, *, own: tuple[str, int], peer: tuple[str, int]) -> int | None:
    """In the text of /proc/net/tcp or /proc/net/tcp6, the uid of the socket whose local
    address is `own` and whose remote address is `peer` (host, port), or None."""
    import ipaddress

    def key(host: str, port: int) -> tuple[object, int]:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
        if ip.version == 6 and ip.ipv4_mapped is not None:  # type: ignore[union-attr]
            ip = ip.ipv4_mapped  # type: ignore[union-attr]
        return ip, port

    want_own, want_peer = key(*own[:2]), key(*peer[:2])
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 8:
            continue
        try:
            if _proc_address(fields[1]) == want_own and _proc_address(fields[2]) == want_peer:
                return int(fields[7])
        except ValueError:
            continue
    return None


def _proc_address(field: str) -> tuple[object, int]:
    """`0100007F:A44F` (IPv4) or 32 hex digits and a port (IPv6), as /proc/net/tcp{,6} write
    them: the address as 32-bit words in the kernel's byte order, the port in hex."""
    import ipaddress
    import sys

    hex_ip, _, hex_port = field.partition(":")
    if len(hex_ip) not in (8, 32):
        raise ValueError(field)
    raw = b"".join(
        int(hex_ip[i : i + 8], 16).to_bytes(4, sys.byteorder) for i in range(0, len(hex_ip), 8)
    )
    ip = ipaddress.ip_address(raw)
    if ip.version == 6 and ip.ipv4_mapped is not None:  # type: ignore[union-attr]
        ip = ip.ipv4_mapped  # type: ignore[union-attr]
    return ip, int(hex_port, 16)
