"""A hostile or damaged solution file is refused cheaply and cleanly: member
names, count and declared sizes are checked before anything is decompressed
(a zip bomb costs its header), a duplicated member is refused, deeply nested
metadata gives a SolutionFileError, foreign files never show numpy's pickle
advice, and the CLI gives corrupt files their own exit status."""

import gzip
import io
import json
import struct
import subprocess
import sys
import time
import zipfile

import numpy as np
import pytest

import babytris
from babytris.files.persist import SolutionFileError


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("trust") / "4x4.npz"
    babytris.solve(width=4, height=4).save(path)
    return path


def _members(path):
    with zipfile.ZipFile(path) as archive:
        return [(info.filename, archive.read(info)) for info in archive.infolist()]


def _write(path, members, *, compression=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return path


@pytest.mark.parametrize("victim", ["solution_values.npy", "table_boards.npy", "table_offsets.npy"])
def test_a_zip_bomb_is_refused_by_its_declared_size(tmp_path, saved, victim):
    bomb = tmp_path / "bomb.npz"
    with zipfile.ZipFile(bomb, "w", compresslevel=1) as out:
        for name, data in _members(saved):
            if name == victim:
                info = zipfile.ZipInfo(name)
                info.compress_type = zipfile.ZIP_DEFLATED
                with out.open(info, "w", force_zip64=True) as f:
                    np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": (2**27,)})
                    chunk = bytes(2**24)
                    for _ in range(2**30 // len(chunk)):
                        f.write(chunk)
            else:
                out.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)
    assert bomb.stat().st_size < 8 * 2**20  # a few MB on disk, 1 GiB declared
    started = time.perf_counter()
    with pytest.raises(SolutionFileError, match=f"{victim[:-4]}: declares 1,073,741,9"):
        babytris.load(bomb)
    assert time.perf_counter() - started < 1.0


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_a_member_appended_twice_is_refused(tmp_path, saved):
    members = _members(saved)
    doubled = dict(members)["solution_values.npy"]
    path = _write(tmp_path / "twice.npz", members + [("solution_values.npy", doubled)])
    with zipfile.ZipFile(path) as archive:
        assert archive.namelist().count("solution_values.npy") == 2
    with pytest.raises(SolutionFileError, match="solution_values: member 'solution_values.npy' appears twice"):
        babytris.load(path)


def test_an_unknown_member_is_refused(tmp_path, saved):
    path = _write(tmp_path / "extra.npz", _members(saved) + [("payload.npy", b"x")])
    with pytest.raises(SolutionFileError, match="payload: not an array a solution file holds"):
        babytris.load(path)


def test_deeply_nested_metadata_is_a_clean_error(tmp_path, saved):
    nested = "[" * 100_000 + "]" * 100_000
    members = [(n, d) for n, d in _members(saved) if n != "meta.npy"]
    import io

    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.array(nested))
    path = _write(tmp_path / "nested.npz", members + [("meta.npy", buffer.getvalue())])
    with pytest.raises(SolutionFileError, match="meta: the metadata's JSON is nested too deeply"):
        babytris.load(path)


@pytest.mark.parametrize("kind", ["gzip", "csv", "pickle-like"])
def test_foreign_files_never_mention_pickles(tmp_path, kind):
    path = tmp_path / "solution.bin"
    data = {"gzip": gzip.compress(b"1,2,3\n"), "csv": b"a,b\n1,2\n", "pickle-like": b"\x80\x04K\x01."}[kind]
    path.write_bytes(data)
    with pytest.raises(ValueError, match="not a babytris solution file") as info:
        babytris.load(path)
    assert "pickle" not in str(info.value)


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_cli_gives_a_corrupt_file_its_own_exit_status(tmp_path, saved):
    from babytris.cli.commands import EXIT_BAD_FILE

    members = _members(saved)
    path = _write(tmp_path / "twice.npz", members + [members[-1]])
    done = subprocess.run(
        [sys.executable, "-m", "babytris", "play", "--solution", str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == EXIT_BAD_FILE == 6, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "appears twice" in done.stderr
    gz = tmp_path / "s.gz"
    gz.write_bytes(gzip.compress(b"x"))
    done = subprocess.run(
        [sys.executable, "-m", "babytris", "play", "--solution", str(gz)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and "pickle" not in done.stderr and "Traceback" not in done.stderr


def _edit(path, out, meta_changes=None, rules_changes=None, **arrays):
    """``path`` rewritten to ``out`` with numpy, as a user editing a file would: the saved digests kept."""
    with np.load(path) as data:
        contents = {key: data[key] for key in data.files}
    meta = json.loads(str(contents["meta"]))
    meta.update(meta_changes or {})
    meta["rules"].update(rules_changes or {})
    contents["meta"] = np.array(json.dumps(meta))
    contents.update({key: change(contents[key]) for key, change in arrays.items()})
    np.savez_compressed(out, **contents)
    return out


def _one_more(a):
    a = a.copy()
    a.flat[0] += 5
    return a


def _swapped(a):
    return a[::-1].copy()


EDITS = {
    "values doubled": dict(solution_values=lambda v: 2 * v),
    "one value +5": dict(solution_values=_one_more),
    "values negated": dict(solution_values=lambda v: -v),
    "values 1e300": dict(solution_values=lambda v: np.full_like(v, 1e300)),
    "discount": dict(meta_changes={"discount": 0.5}),
    "line scores": dict(rules_changes={"line_scores": [0.0, 2.0, 3.0, 6.0, 10.0]}),
    "probabilities": dict(rules_changes={"probabilities": [0.3, 0.7]}),
    "mirror": dict(rules_changes={"mirror": True}),
    "opponent": dict(meta_changes={"opponent": "minimax"}),
    "policy replaced": dict(solution_policy=lambda p: np.where(p > 0, 0, p).astype(p.dtype)),
    "next boards swapped": dict(table_next_board=_swapped),
    "lines changed": dict(table_lines=lambda lines: (lines + 1).astype(lines.dtype)),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_file_edited_after_saving_is_refused_by_its_digests(tmp_path, saved, edit):
    path = _edit(saved, tmp_path / "edited.npz", **EDITS[edit])
    with pytest.raises(SolutionFileError, match="SHA-256 differs: the file was changed after it was saved"):
        babytris.load(path, verify=False)  # (every member read, each against its digest)
    with pytest.raises(SolutionFileError) as info:
        babytris.load(path)  # (verified: every member read too, the table's compared with the rules' own)
    if edit in ("next boards swapped", "lines changed"):  # (named, and as damage: it fails its digest)
        assert str(info.value).endswith("SHA-256 differs: the file was changed after it was saved")
        assert info.value.field == next(iter(EDITS[edit]))


def test_the_saved_digests_match_an_unedited_file(saved):
    with np.load(saved) as data:
        meta = json.loads(str(data["meta"]))
        assert set(meta["digests"]) == {key for key in data.files}
    assert babytris.load(saved).start_value > 0


def test_a_node_tables_offsets_are_bounded_by_its_rows(tmp_path):
    # A row of a node table (previews, hold) is a node already: its states are one per piece.
    # The bound once counted every queue and hold slot again per row: 36 times too loose here.
    path = tmp_path / "nodes.npz"
    babytris.solve(width=4, height=4, preview=1, hold=True).save(path)
    members = dict(_members(path))
    rows = len(np.load(path)["table_boards"])
    bound = 8 * (rows * 2 + 1)
    padded = io.BytesIO()
    np.save(padded, np.zeros(3 * bound // 8, dtype=np.int64))
    forged = _write(tmp_path / "forged.npz", [*{**members, "table_offsets.npy": padded.getvalue()}.items()])
    with pytest.raises(SolutionFileError, match=rf"table_offsets: declares {3 * bound + 128:,} bytes"):
        babytris.load(forged, verify=False)


def _damaged(path, out, member, *, stored):
    """``path`` copied to ``out`` with two bytes flipped inside ``member``'s data as it lies in the
    archive (``stored``: the member written uncompressed first, so that only its zip CRC tells)."""
    source = _write(out, _members(path), compression=zipfile.ZIP_STORED) if stored else path
    data = bytearray(source.read_bytes())
    with zipfile.ZipFile(source) as archive:
        info = archive.getinfo(member)
    name_length, extra_length = struct.unpack("<HH", data[info.header_offset + 26 : info.header_offset + 30])
    middle = info.header_offset + 30 + name_length + extra_length + info.compress_size // 2
    data[middle] ^= 0xFF
    data[middle + 1] ^= 0x55
    out.write_bytes(bytes(data))
    return out


@pytest.mark.parametrize("stored", [False, True], ids=["deflated", "stored"])
@pytest.mark.parametrize("member", ["table_lines", "table_next_board", "table_placement", "solution_values"])
@pytest.mark.parametrize("verify", [True, False])
def test_a_damaged_member_is_refused_by_name(tmp_path, saved, member, stored, verify):
    # issue 47: a verified load once left the table's members unread and reported the file sound
    path = _damaged(saved, tmp_path / "damaged.npz", f"{member}.npy", stored=stored)
    with pytest.raises(SolutionFileError, match=f"{member}: the member is damaged .*Bad CRC-32") as info:
        babytris.load(path, verify=verify)
    assert info.value.field == member


def test_a_table_member_replaced_with_its_crc_is_refused_by_its_digest(tmp_path, saved):
    # The zip CRC matches (the member written anew): the saved digest tells, verified or not.
    members = dict(_members(saved))
    lines = np.lib.format.read_array(io.BytesIO(members["table_lines.npy"]))
    lines[np.flatnonzero(lines == 0)[3]] = 1
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, lines)
    members["table_lines.npy"] = buffer.getvalue()
    path = _write(tmp_path / "edited.npz", list(members.items()))
    for verify in (True, False):
        with pytest.raises(SolutionFileError, match="table_lines: its SHA-256 differs") as info:
            babytris.load(path, verify=verify)
        assert info.value.field == "table_lines"
