"""The local copies of far files outside every mapped root: made through the transport (here
`env`, which runs the far command on this machine as `docker exec -i` would in a container),
read again when the far file changed, kept when it is gone."""

from __future__ import annotations

import os
from pathlib import Path

from lspmux.remote.mapping import PathMap
from lspmux.remote.mirror import Mirror
from lspmux.remote.target import parse_exec


def setup(tmp_path: Path) -> tuple[Mirror, PathMap, Path, Path]:
    far = tmp_path / "far" / "registry" / "lib.rs"
    far.parent.mkdir(parents=True)
    far.write_text("pub fn one() {}\n")
    mirror_dir = tmp_path / "cache" / "mirror"
    pmap = PathMap([(str(tmp_path / "here"), str(tmp_path / "far" / "proj"))], str(mirror_dir))
    copy = Path(str(mirror_dir) + str(far))
    return Mirror(parse_exec("env")), pmap, far, copy


async def test_a_copy_is_made_once_and_read_again_when_the_far_file_changes(
    tmp_path: Path,
) -> None:
    mirror, pmap, far, copy = setup(tmp_path)
    await mirror.ensure(pmap, [str(far)])
    assert copy.read_text() == "pub fn one() {}\n"
    assert not os.access(copy, os.W_OK) or os.geteuid() == 0  # read-only (root writes anyway)
    assert mirror.reads == 1
    await mirror.ensure(pmap, [str(far), str(far)])  # asked again, unchanged: only a stat
    assert mirror.reads == 1
    far.write_text("pub fn one() {}\npub fn two() {}\n")
    await mirror.ensure(pmap, [str(far)])
    assert copy.read_text() == "pub fn one() {}\npub fn two() {}\n"
    assert mirror.reads == 2


async def test_a_same_size_rewrite_is_seen_by_its_mtime(tmp_path: Path) -> None:
    mirror, pmap, far, copy = setup(tmp_path)
    await mirror.ensure(pmap, [str(far)])
    far.write_text("pub fn two() {}\n")  # the same size
    stat = far.stat()
    os.utime(far, (stat.st_atime, stat.st_mtime + 5))
    await mirror.ensure(pmap, [str(far)])
    assert copy.read_text() == "pub fn two() {}\n" and mirror.reads == 2


async def test_a_far_file_that_is_gone_keeps_its_copy_and_a_missing_one_makes_none(
    tmp_path: Path,
) -> None:
    mirror, pmap, far, copy = setup(tmp_path)
    await mirror.ensure(pmap, [str(far)])
    far.unlink()
    missing = tmp_path / "far" / "nothing.rs"
    await mirror.ensure(pmap, [str(far), str(missing)])  # logged, not raised
    assert copy.read_text() == "pub fn one() {}\n" and mirror.reads == 1
    assert not Path(str(pmap.fallback) + str(missing)).exists()
