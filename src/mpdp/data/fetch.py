"""Obtain the raw files of a data set, verified against their pinned SHA-256 (spec E1.1).

Order of preference for every raw file of a data set:

1. ``data/raw/<id>/<file>`` already present: used only if its SHA-256 matches the pin;
2. a mirror folder laid out like ``../shared/datasets``: the gzip copy is decompressed;
3. the upstream URLs, tried in turn (only if downloads are allowed), unpacked as listed in
   the registry.

A new file is streamed into a temporary sibling, hashed on the way, and renamed into place
only when its hash matches, so ``data/raw`` never holds an unverified file.
"""

from __future__ import annotations

import gzip
import hashlib
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import BinaryIO

from mpdp.data.registry import DatasetInfo, RawFile, get
from mpdp.errors import ChecksumMismatchError, DatasetUnavailableError, InputDataError
from mpdp.io import atomic_path

Log = Callable[[str], None]

CHUNK = 1 << 20
TIMEOUT_S = 60.0
PROGRESS_MIN_BYTES = 8 << 20
USER_AGENT = "mpdp-data-fetch/0.1 (replication pipeline; urllib)"


def sha256_file(path: Path) -> str:
    """SHA-256 hex digest of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def raw_path(raw_dir: Path, dataset_id: str, raw: RawFile) -> Path:
    """Where the pipeline stores ``raw`` uncompressed: ``<raw_dir>/<id>/<name>``."""
    return Path(raw_dir) / dataset_id / raw.name


def locate(dataset_id: str, raw_dir: Path, mirror: Path | None, allow_download: bool) -> str | None:
    """Where ``fetch`` will take the data set from, without hashing (for DAG building).

    Returns ``"raw"`` if every raw file already lies in ``raw_dir/<id>/``, ``"mirror"`` if
    each missing one is in the mirror, ``"download"`` if downloads are allowed, else None.
    """
    info = get(dataset_id)
    missing = [raw for raw in info.files if not raw_path(raw_dir, dataset_id, raw).is_file()]
    if not missing:
        return "raw"
    if mirror is not None and all((Path(mirror) / raw.mirror_path).is_file() for raw in missing):
        return "mirror"
    if allow_download:
        return "download"
    return None


def fetch(
    dataset_id: str,
    raw_dir: Path,
    mirror: Path | None,
    allow_download: bool,
    log: Log = print,
) -> list[Path]:
    """Make every raw file of ``dataset_id`` present and verified; return their paths.

    Raises ChecksumMismatchError for a file whose hash differs from the pin and
    DatasetUnavailableError when a file can be obtained from nowhere (spec E1.1).
    """
    info = get(dataset_id)
    return [fetch_file(info, raw, raw_dir, mirror, allow_download, log) for raw in info.files]


def fetch_file(
    info: DatasetInfo,
    raw: RawFile,
    raw_dir: Path,
    mirror: Path | None,
    allow_download: bool,
    log: Log = print,
) -> Path:
    """Make one raw file present and verified in ``raw_dir/<id>/``; return its path."""
    dest = raw_path(raw_dir, info.id, raw)
    if dest.is_file():
        _check_existing(dest, raw)
        log(f"{info.id}: {raw.name} present in {dest.parent} (SHA-256 verified)")
        return dest
    mirror_file = Path(mirror) / raw.mirror_path if mirror is not None else None
    if mirror_file is not None and mirror_file.is_file():
        _from_mirror(mirror_file, raw, dest)
        log(f"{info.id}: {raw.name} copied from mirror {mirror_file} (SHA-256 verified)")
        return dest
    if not allow_download:
        raise DatasetUnavailableError(_unavailable_message(info, raw, dest, mirror, None))
    return _download(info, raw, dest, mirror, log)


def _check_existing(dest: Path, raw: RawFile) -> None:
    actual = sha256_file(dest)
    if actual != raw.sha256:
        raise ChecksumMismatchError(
            f"raw file {dest} has the wrong SHA-256.\n"
            f"  expected: {raw.sha256}\n"
            f"  actual:   {actual}\n"
            f"It is not the upstream file (edited, truncated or a different version). "
            f"Delete it and rerun to fetch the verified copy, or replace it with the "
            f"unmodified upstream file ({raw.size:,} bytes)."
        )


class _WrongContent(Exception):
    """Unpacked content whose SHA-256 differs from the pin (nothing was written)."""

    def __init__(self, actual: str) -> None:
        super().__init__(actual)
        self.actual = actual


def _from_mirror(mirror_file: Path, raw: RawFile, dest: Path) -> None:
    try:
        _materialise(mirror_file, ("gzip",), raw, dest)
    except _WrongContent as exc:
        raise ChecksumMismatchError(
            f"mirror copy {mirror_file} does not hold the pinned {raw.name}: the SHA-256 of "
            f"its decompressed content is wrong.\n"
            f"  expected: {raw.sha256}\n"
            f"  actual:   {exc.actual}\n"
            f"Nothing was written to {dest.parent}. Replace the mirror copy with a gzip copy "
            f"(gzip -9 -n) of the unmodified upstream file ({raw.size:,} bytes uncompressed), "
            f"or remove it so that the file is downloaded, and rerun."
        ) from None
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise InputDataError(
            f"mirror copy {mirror_file} of {raw.name} cannot be decompressed ({exc}). "
            f"Replace it with a gzip copy (gzip -9 -n) of the upstream file and rerun."
        ) from None


def _materialise(source: Path, unpack: tuple[str, ...], raw: RawFile, dest: Path) -> None:
    """Unpack ``source`` into ``dest`` atomically, hashing on the way.

    Raises _WrongContent, leaving no file behind, if the hash differs from the pin.
    """
    with atomic_path(dest) as tmp:
        with _unpacked(source, unpack) as stream, open(tmp, "wb") as out:
            actual = _copy_hashing(stream, out)
        if actual != raw.sha256:
            raise _WrongContent(actual)


@contextmanager
def _unpacked(source: Path, unpack: tuple[str, ...]) -> Iterator[BinaryIO]:
    """Open ``source`` and apply the unpack steps of :class:`Source` as a stream."""
    with ExitStack() as stack:
        stream: BinaryIO = stack.enter_context(open(source, "rb"))
        for step in unpack:
            if step == "gzip":
                stream = stack.enter_context(gzip.GzipFile(fileobj=stream, mode="rb"))
            elif step.startswith("zip:"):
                archive = stack.enter_context(zipfile.ZipFile(stream))
                stream = stack.enter_context(archive.open(step.removeprefix("zip:")))
            else:
                raise ValueError(f"unknown unpack step {step!r}")
        yield stream


def _copy_hashing(stream: BinaryIO, out: BinaryIO) -> str:
    digest = hashlib.sha256()
    while chunk := stream.read(CHUNK):
        digest.update(chunk)
        out.write(chunk)
    return digest.hexdigest()


def _download(info: DatasetInfo, raw: RawFile, dest: Path, mirror: Path | None, log: Log) -> Path:
    """Try each upstream source in turn; the first verified one wins."""
    failures: list[str] = []
    mismatches: list[str] = []
    dest.parent.mkdir(parents=True, exist_ok=True)
    for source in raw.sources:
        with tempfile.TemporaryDirectory(prefix=".download-", dir=dest.parent) as tmp_dir:
            download = Path(tmp_dir) / "download"
            try:
                _download_url(source.url, download, f"{info.id}: {raw.name}", log)
                _materialise(download, source.unpack, raw, dest)
            except _WrongContent as exc:
                log(f"{info.id}: {raw.name}: {source.url} gave content with the wrong SHA-256")
                mismatches.append(f"{source.url}: actual SHA-256 {exc.actual}")
                continue
            except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile) as exc:
                log(f"{info.id}: {raw.name}: {source.url} failed ({_reason(exc)})")
                failures.append(f"{source.url} ({_reason(exc)})")
                continue
        log(f"{info.id}: {raw.name} downloaded from {source.url} (SHA-256 verified)")
        return dest
    if mismatches:
        raise ChecksumMismatchError(
            f"every download of {raw.name} that succeeded has the wrong SHA-256 "
            f"(expected {raw.sha256}):\n  " + "\n  ".join(mismatches + failures) + "\n"
            f"Nothing was written to {dest.parent}. The upstream file may have changed; "
            f"obtain the original file and put it at {dest}."
        )
    raise DatasetUnavailableError(_unavailable_message(info, raw, dest, mirror, failures))


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return f"{exc.reason}"
    if isinstance(exc, KeyError):
        return f"archive member {exc} not found"
    return f"{type(exc).__name__}: {exc}"


def _download_url(url: str, target: Path, label: str, log: Log) -> None:
    """Stream ``url`` into ``target``, logging progress for big files."""
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response, open(target, "wb") as out:
        total = int(response.headers.get("Content-Length") or 0)
        done = 0
        next_report = PROGRESS_MIN_BYTES
        log(f"{label}: downloading {url}" + (f" ({total:,} bytes)" if total else ""))
        while chunk := response.read(CHUNK):
            out.write(chunk)
            done += len(chunk)
            if done >= next_report:
                share = f" ({100 * done / total:.0f}%)" if total else ""
                log(f"{label}: {done / 2**20:.0f} MiB{share}")
                next_report += max(PROGRESS_MIN_BYTES, total // 10)
    if total and done != total:
        raise OSError(f"download truncated: {done:,} of {total:,} bytes")


def _unavailable_message(
    info: DatasetInfo,
    raw: RawFile,
    dest: Path,
    mirror: Path | None,
    failures: list[str] | None,
) -> str:
    """What is missing, where the pipeline looked, and exactly where to put the file."""
    where_mirror = (
        f"{Path(mirror) / raw.mirror_path} (absent)"
        if mirror is not None
        else "no mirror configured (config key data_mirror or $MPDP_DATA_MIRROR)"
    )
    if failures is None:
        tried = "downloads not allowed (config key allow_download); upstream URLs:\n    " + (
            "\n    ".join(s.url for s in raw.sources)
        )
    else:
        tried = "downloads tried, all failed:\n    " + "\n    ".join(failures)
    mirror_target = (
        Path(mirror) / raw.mirror_path if mirror is not None else f"<mirror>/{raw.mirror_path}"
    )
    return (
        f"{info.display_name} ({info.id}): raw file {raw.name} is not available.\n"
        f"  expected SHA-256 of {raw.name} (uncompressed, {raw.size:,} bytes): {raw.sha256}\n"
        f"  looked in: {dest} (absent); mirror: {where_mirror}\n"
        f"  {tried}\n"
        f"To fix it, obtain {raw.name} (see {info.homepage} or the URLs above) and do one of:\n"
        f"  - put it, uncompressed, at {dest}, or\n"
        f"  - put a gzip copy (gzip -9 -n) at {mirror_target}, or\n"
        f"  - on a machine with internet access, set allow_download: true to download it,\n"
        f"then rerun. Runs over the other data sets do not need this file."
    )
