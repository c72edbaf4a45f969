"""Fetching and verifying raw files: raw dir, mirror, download (spec E1.1).

Downloads go through pooch (``pooch.retrieve``); they are exercised offline with ``file://``
URLs (copied by fetch's own pooch downloader) and with pooch's HTTP downloader patched to
serve local files.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from mpdp.data import fetch, registry
from mpdp.data.registry import DatasetInfo, RawFile, Source
from mpdp.errors import ChecksumMismatchError, DatasetUnavailableError, InputDataError

CONTENT = b"a,b,c\n" * 5000


def _files_under(path: Path) -> list[Path]:
    return [p for p in path.rglob("*") if p.is_file()] if path.exists() else []


def _gzip_to(content: bytes, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(gzip.compress(content, mtime=0))
    return dest


def _zip_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _toy(sources: tuple[Source, ...], content: bytes = CONTENT) -> tuple[DatasetInfo, RawFile]:
    raw = RawFile(
        "toy.csv", hashlib.sha256(content).hexdigest(), len(content), "toy/toy.csv.gz", sources
    )
    info = DatasetInfo(
        "toy", "Toy", (raw,), "+1", "https://example.org/toy", "CC0", "10.0/toy", "none"
    )
    return info, raw


def test_locate_is_cheap_and_ordered(tmp_path: Path) -> None:
    raw_dir, mirror = tmp_path / "raw", tmp_path / "mirror"
    assert fetch.locate("adult", raw_dir, None, False) is None
    assert fetch.locate("adult", raw_dir, None, True) == "download"
    assert fetch.locate("adult", raw_dir, mirror, False) is None
    _gzip_to(b"x", mirror / "adult/adult.data.gz")
    assert fetch.locate("adult", raw_dir, mirror, False) is None  # adult.test still missing
    _gzip_to(b"x", mirror / "adult/adult.test.gz")
    assert fetch.locate("adult", raw_dir, mirror, False) == "mirror"
    (raw_dir / "adult").mkdir(parents=True)
    (raw_dir / "adult/adult.data").write_text("not hashed here")
    assert fetch.locate("adult", raw_dir, mirror, False) == "mirror"
    (raw_dir / "adult/adult.test").write_text("not hashed here")
    assert fetch.locate("adult", raw_dir, None, False) == "raw"


def test_fetch_from_mirror_then_reuse(mirror: Path, tmp_path: Path) -> None:
    lines: list[str] = []
    paths = fetch.fetch("breast_cancer", tmp_path / "raw", mirror, False, log=lines.append)
    expected = tmp_path / "raw/breast_cancer/breast-cancer-wisconsin.data"
    assert paths == [expected]
    assert fetch.sha256_file(expected) == registry.get("breast_cancer").files[0].sha256
    assert _files_under(tmp_path / "raw") == [expected]  # no temporary left behind
    assert "copied from the mirror, <mirror>/breast_cancer_wisconsin/" in lines[-1]
    assert fetch.fetch("breast_cancer", tmp_path / "raw", None, False, log=lines.append) == [
        expected
    ]
    assert "present" in lines[-1]


def test_tampered_mirror_copy_leaves_nothing(mirror: Path, tmp_path: Path) -> None:
    original = gzip.decompress(
        (mirror / "breast_cancer_wisconsin/breast-cancer-wisconsin.data.gz").read_bytes()
    )
    tampered = original.replace(b"1000025,5,", b"1000025,6,", 1)
    fake_mirror = tmp_path / "mirror"
    _gzip_to(tampered, fake_mirror / "breast_cancer_wisconsin/breast-cancer-wisconsin.data.gz")
    with pytest.raises(ChecksumMismatchError) as info:
        fetch.fetch("breast_cancer", tmp_path / "raw", fake_mirror, True, log=lambda _: None)
    message = str(info.value)
    pinned = registry.get("breast_cancer").files[0].sha256
    assert f"expected: {pinned}" in message
    assert f"actual:   {hashlib.sha256(tampered).hexdigest()}" in message
    assert "breast-cancer-wisconsin.data" in message and "rerun" in message
    assert _files_under(tmp_path / "raw") == []


def test_the_fetch_log_names_paths_relative_to_the_mirror_and_the_project(mirror: Path, tmp_path: Path,
                                                                          monkeypatch) -> None:
    """Issue 58: logs/fetch_raw/<id>.log (the job's lines and its errors) shows no absolute path of
    the machine: mirror files as <mirror>/..., raw files relative to the project."""
    from mpdp.pipeline.runner import run_step

    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    for raw_dir in (Path("data/raw"), project / "data/raw"):  # as the script passes it, and absolute
        log_path = project / "logs/fetch_raw/breast_cancer.log"
        for _ in range(2):  # copied from the mirror, then present
            run_step(lambda log, raw_dir=raw_dir: fetch.fetch("breast_cancer", raw_dir, mirror, False, log=log.info),
                     log_path, "fetch_raw breast_cancer")
            text = log_path.read_text()
            assert str(tmp_path) not in text and str(mirror.resolve()) not in text, text
        assert "present in data/raw/breast_cancer (SHA-256 verified)" in text
        (project / "data/raw/breast_cancer/breast-cancer-wisconsin.data").unlink()
    lines: list[str] = []
    fetch.fetch("breast_cancer", project / "data/raw", mirror, False, log=lines.append)
    assert lines == ["breast_cancer: breast-cancer-wisconsin.data copied from the mirror, "
                     "<mirror>/breast_cancer_wisconsin/breast-cancer-wisconsin.data.gz (SHA-256 verified)"]
    info, raw = _toy((), CONTENT)  # an error names them so too
    damaged = tmp_path / "damaged-mirror"
    (damaged / "toy").mkdir(parents=True)
    (damaged / raw.mirror_path).write_bytes(b"not gzip")
    with pytest.raises(InputDataError) as err:
        fetch.fetch_file(info, raw, project / "data/raw", damaged, False, log=lambda _: None)
    assert str(tmp_path) not in str(err.value) and "nothing was written to data/raw/toy" in str(err.value)


def test_wrong_file_in_raw_dir_is_reported_not_used(tmp_path: Path) -> None:
    bad = tmp_path / "raw/breast_cancer/breast-cancer-wisconsin.data"
    bad.parent.mkdir(parents=True)
    bad.write_text("1,2,3\n")
    with pytest.raises(
        ChecksumMismatchError, match=r"(?s)wrong SHA-256.*expected: 402c5853.*Delete it and rerun"
    ):
        fetch.fetch("breast_cancer", tmp_path / "raw", None, False, log=lambda _: None)


def test_credit_card_unavailable_offline_says_where_to_put_it(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    with pytest.raises(DatasetUnavailableError) as info:
        fetch.fetch("credit_card", tmp_path / "raw", mirror, False, log=lambda _: None)
    message = str(info.value)
    assert "creditcard.csv" in message
    assert registry.get("credit_card").files[0].sha256 in message
    assert str(tmp_path / "raw/credit_card/creditcard.csv") in message
    assert "<mirror>/creditcard/creditcard.csv.gz (absent" in message and str(mirror) not in message
    assert "storage.googleapis.com" in message and "downloads not allowed" in message
    assert _files_under(tmp_path / "raw") == []


def test_unavailable_without_mirror_names_the_mirror_path(tmp_path: Path) -> None:
    with pytest.raises(DatasetUnavailableError, match=r"<mirror>/creditcard/creditcard.csv.gz"):
        fetch.fetch("credit_card", tmp_path / "raw", None, False, log=lambda _: None)


def test_download_tries_urls_in_turn_and_unpacks_nested_zip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inner = _zip_bytes({"pkg/toy.csv": CONTENT})
    outer = tmp_path / "upstream/outer.zip"
    outer.parent.mkdir()
    outer.write_bytes(_zip_bytes({"inner.zip": inner}))
    info, raw = _toy(
        (
            Source((tmp_path / "upstream/missing.csv").as_uri()),
            Source(outer.as_uri(), ("zip:not-there.csv",)),
            Source(outer.as_uri(), ("zip:inner.zip", "zip:pkg/toy.csv")),
        )
    )
    lines: list[str] = []
    dest = fetch.fetch_file(info, raw, tmp_path / "raw", None, True, log=lines.append)
    assert dest.read_bytes() == CONTENT
    assert _files_under(tmp_path / "raw") == [dest]
    assert sum("failed" in line for line in lines) == 2
    assert any("archive member" in line for line in lines)
    assert "downloaded from" in lines[-1]


def _serve_https_from(monkeypatch: pytest.MonkeyPatch, files: dict[str, bytes]) -> list[str]:
    """Patch pooch's HTTP downloader to serve ``files`` (URL -> bytes); return the URLs asked."""
    import pooch

    asked: list[str] = []

    def fake_call(self, url, output_file, pooch_obj, check_only=False):
        asked.append(url)
        assert self.kwargs["headers"]["User-Agent"] == fetch.USER_AGENT
        if url not in files:
            raise OSError(f"404 Client Error: Not Found for url: {url}")
        data = files[url]
        if isinstance(output_file, str):
            Path(output_file).write_bytes(data)
        else:
            output_file.write(data)

    monkeypatch.setattr(pooch.HTTPDownloader, "__call__", fake_call)
    return asked


def test_https_download_goes_through_pooch_with_known_hash(tmp_path: Path, monkeypatch) -> None:
    url = "https://example.org/toy.csv"
    asked = _serve_https_from(monkeypatch, {url: CONTENT})
    info, raw = _toy((Source("https://example.org/gone.csv"), Source(url)))
    dest = fetch.fetch_file(info, raw, tmp_path / "raw", None, True, log=lambda _: None)
    assert asked == ["https://example.org/gone.csv", url]
    assert dest.read_bytes() == CONTENT and _files_under(tmp_path / "raw") == [dest]


def test_https_checksum_mismatch_is_clear_and_leaves_nothing(tmp_path: Path, monkeypatch) -> None:
    import hashlib as _h

    url, gz_url = "https://example.org/toy.csv", "https://example.org/toy.csv.gz"
    bad = CONTENT + b"tampered\n"
    _serve_https_from(monkeypatch, {url: bad, gz_url: gzip.compress(bad, mtime=0)})
    info, raw = _toy((Source(url), Source(gz_url, ("gzip",))))
    with pytest.raises(ChecksumMismatchError) as err:
        fetch.fetch_file(info, raw, tmp_path / "raw", None, True, log=lambda _: None)
    message = str(err.value)
    actual = _h.sha256(bad).hexdigest()
    assert f"{url}: actual SHA-256 {actual}" in message  # pooch's known_hash check
    assert f"{gz_url}: actual SHA-256 {actual}" in message  # after pooch's Decompress
    assert f"expected {raw.sha256}" in message and "Nothing was written" in message
    assert _files_under(tmp_path / "raw") == []


def test_download_gzip_source(tmp_path: Path) -> None:
    source = _gzip_to(CONTENT, tmp_path / "upstream/toy.csv.gz")
    info, raw = _toy((Source(source.as_uri(), ("gzip",)),))
    dest = fetch.fetch_file(info, raw, tmp_path / "raw", None, True, log=lambda _: None)
    assert fetch.sha256_file(dest) == raw.sha256


def test_download_with_wrong_content_leaves_nothing(tmp_path: Path) -> None:
    source = tmp_path / "upstream/toy.csv"
    source.parent.mkdir()
    source.write_bytes(CONTENT + b"changed upstream\n")
    info, raw = _toy((Source(source.as_uri()),))
    with pytest.raises(ChecksumMismatchError, match=f"(?s)expected {raw.sha256}.*actual SHA-256"):
        fetch.fetch_file(info, raw, tmp_path / "raw", None, True, log=lambda _: None)
    assert _files_under(tmp_path / "raw") == []


def test_all_downloads_failing_lists_the_urls(tmp_path: Path) -> None:
    urls = [(tmp_path / f"gone{i}.csv").as_uri() for i in range(2)]
    info, raw = _toy(tuple(Source(u) for u in urls))
    with pytest.raises(DatasetUnavailableError) as err:
        fetch.fetch_file(info, raw, tmp_path / "raw", tmp_path / "mirror", True, log=lambda _: None)
    message = str(err.value)
    assert all(u in message for u in urls)
    assert "downloads tried, all failed" in message
    assert (
        str(tmp_path / "raw/toy/toy.csv") in message
        and "<mirror>/toy/toy.csv.gz" in message and str(tmp_path / "mirror") not in message
    )
    assert _files_under(tmp_path / "raw") == []


def _damaged(kind: str, data: bytes) -> bytes:
    """A gzip copy damaged as a disk or a copy damages it (issue 37)."""
    if kind == "bit flip":  # two bits of the deflate block header (after gzip's 10 bytes): zlib.error
        return data[:11] + bytes([data[11] ^ 0x06]) + data[12:]
    if kind == "truncated":  # EOFError
        return data[: len(data) // 2]
    return b"not gzip at all" + data  # bad magic: gzip.BadGzipFile


@pytest.mark.parametrize("kind", ["bit flip", "truncated", "bad magic"])
def test_a_damaged_mirror_copy_is_one_line_naming_the_file_and_the_fix(tmp_path: Path, kind: str) -> None:
    content = bytes(range(256)) * 4000  # compresses into a long deflate stream
    info, raw = _toy((), content)
    mirror = tmp_path / "mirror"
    copy = mirror / raw.mirror_path
    copy.parent.mkdir(parents=True)
    copy.write_bytes(_damaged(kind, gzip.compress(content, mtime=0)))
    with pytest.raises(InputDataError) as err:
        fetch.fetch_file(info, raw, tmp_path / "raw", mirror, False, log=lambda _: None)
    message = str(err.value)
    assert message.startswith(f"mirror copy <mirror>/{raw.mirror_path} of toy.csv cannot be decompressed (")
    assert str(copy) not in message
    assert "gzip -9 -n" in message and raw.sha256 in message and "\n" not in message
    assert _files_under(tmp_path / "raw") == []


def test_the_bit_flip_case_is_a_zlib_error(tmp_path: Path) -> None:
    """The damage of the first case really is the mirror's "Error -3 while decompressing data"."""
    import zlib

    content = bytes(range(256)) * 4000
    with pytest.raises(zlib.error):
        gzip.decompress(_damaged("bit flip", gzip.compress(content, mtime=0)))


def test_a_raw_file_damaged_after_its_fetch_is_noticed(mirror: Path, tmp_path: Path) -> None:
    """Issue 37: a truncated data/raw file was not noticed (its manifest, the input of prepare,
    was up to date). check_fetched runs at planning: one line naming the file and the repair."""
    import os

    raw_dir = tmp_path / "raw"
    (path,) = fetch.fetch("breast_cancer", raw_dir, mirror, False, log=lambda _: None)
    manifest = raw_dir / "breast_cancer" / "manifest.json"
    manifest.write_text("{}")
    fetch.check_fetched("breast_cancer", raw_dir)  # intact
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # truncated
    with pytest.raises(InputDataError, match=rf"^raw file {path} has .* bytes, not the verified .*; restore it "
                                             rf"with `rm -f {path} {manifest}` and run snakemake again"):
        fetch.check_fetched("breast_cancer", raw_dir)
    path.write_bytes(data.replace(b"1000025,5,", b"1000025,6,", 1))  # same size, edited later
    later = manifest.stat().st_mtime_ns + 10**9
    os.utime(path, ns=(later, later))
    with pytest.raises(InputDataError, match="changed after it was verified"):
        fetch.check_fetched("breast_cancer", raw_dir)
    path.write_bytes(data)  # the verified content again, even with a newer time stamp
    os.utime(path, ns=(later, later))
    fetch.check_fetched("breast_cancer", raw_dir)
    path.unlink()
    with pytest.raises(InputDataError, match=r"is missing though .*manifest.json lists it"):
        fetch.check_fetched("breast_cancer", raw_dir)
    manifest.unlink()
    fetch.check_fetched("breast_cancer", raw_dir)  # not fetched yet: the fetch job will run


def test_a_same_size_edit_with_its_old_time_restored_is_noticed(mirror: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 47: a raw file edited in place (same size) with its old modification time put back
    passed the size-and-time check. The SHA-256 is recomputed whenever the file's identity
    (inode, size, modification and status-change times) differs from the verified one; an
    unchanged file is not hashed again."""
    import os

    raw_dir = tmp_path / "raw"
    (path,) = fetch.fetch("breast_cancer", raw_dir, mirror, False, log=lambda _: None)
    (raw_dir / "breast_cancer" / "manifest.json").write_text("{}")
    hashed = []
    real = fetch.sha256_file
    monkeypatch.setattr(fetch, "sha256_file", lambda p: hashed.append(p) or real(p))
    fetch.check_fetched("breast_cancer", raw_dir)  # first look: hashed, stamp written
    assert hashed == [path] and (raw_dir / "breast_cancer" / fetch.VERIFIED_STAMP).is_file()
    fetch.check_fetched("breast_cancer", raw_dir)  # unchanged: one stat, no hash
    assert hashed == [path]
    before = path.stat()
    data = path.read_bytes()
    path.write_bytes(data.replace(b"1000025,5,", b"1000025,6,", 1))  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # its old time put back
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    with pytest.raises(InputDataError, match="changed after it was verified"):
        fetch.check_fetched("breast_cancer", raw_dir)
    path.write_bytes(data)  # the verified bytes again: accepted (hashed once more)
    fetch.check_fetched("breast_cancer", raw_dir)
    (raw_dir / "breast_cancer" / fetch.VERIFIED_STAMP).write_text("{not json")  # a damaged stamp: hash again
    fetch.check_fetched("breast_cancer", raw_dir)
    assert len(hashed) == 4
