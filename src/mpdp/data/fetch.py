"""Obtain the raw files of a data set, verified against their pinned SHA-256 (spec E1.1).

Order of preference for every raw file of a data set:

1. ``data/raw/<id>/<file>`` already present: used only if its SHA-256 matches the pin;
2. a mirror folder laid out like ``../shared/datasets``: the gzip copy is decompressed;
3. the upstream URLs, tried in turn (only if downloads are allowed), downloaded with pooch
   (``pooch.retrieve``: pinned ``known_hash`` for plain files, its ``Decompress``/``Unzip``
   processors for archives, as listed in the registry).

A new file is produced in a temporary folder or sibling, hashed, and renamed into place only
when its hash matches, so ``data/raw`` never holds an unverified file.

The messages (the job's log ``logs/fetch_raw/<id>.log``, and its errors) name a mirror file as
``<mirror>/<path in the mirror>`` and a raw file by its path relative to the working directory
(the project), never by the machine's absolute path (issue 58): a log reads the same on every
machine, and shows nothing of where the mirror lives.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import re
import shutil
import tempfile
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import BinaryIO

import pooch

from mpdp.data.registry import DatasetInfo, RawFile, Source, get
from mpdp.errors import ChecksumMismatchError, DatasetUnavailableError, InputDataError
from mpdp.io import atomic_path, read_json, write_json

Log = Callable[[str], None]

CHUNK = 1 << 20
TIMEOUT_S = 60.0
USER_AGENT = "mpdp-data-fetch/0.1 (replication pipeline; pooch)"


#: how messages name the mirror's root folder ($MPDP_DATA_MIRROR or config key data_mirror)
MIRROR_ROOT = "<mirror>"


def in_mirror(raw: RawFile) -> str:
    """A mirror file as messages name it: relative to the mirror (module docstring)."""
    return f"{MIRROR_ROOT}/{raw.mirror_path}"


def shown(path: Path) -> str:
    """A local path as messages name it: relative to the working directory (the project) when
    inside it, else as given (module docstring)."""
    path = Path(path)
    if path.is_absolute():
        with contextlib.suppress(ValueError, OSError):
            return str(path.resolve().relative_to(Path.cwd().resolve()))
    return str(path)


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


#: per raw folder: the file identities whose SHA-256 was verified (see :func:`check_fetched`)
VERIFIED_STAMP = ".verified.json"


def _identity(path: Path) -> list[int]:
    """What changes whenever a file's bytes could have: device, inode, size, modification and
    status-change times. A write sets both times; ``touch -d``/``utime`` can put the modification
    time back but sets the status-change time to now, which no user can set back (only a
    changed system clock could), and a replaced file has another inode."""
    st = path.stat()
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def check_fetched(dataset_id: str, raw_dir: Path) -> None:
    """Raise :class:`InputDataError` (one line naming the file and the repair) if a raw file of
    ``dataset_id`` was lost or changed after its fetch was verified (spec E1.1, issues 37, 47).

    Runs at planning for every data set whose ``manifest.json`` (the verified checksums, input
    of ``prepare``) exists: Snakemake would not rerun the fetch, so a truncated or edited raw
    file would otherwise reach ``prepare`` only when something else reruns it. Each file is
    verified by its SHA-256, not by its size and time: the hash is recomputed whenever the file's
    identity (:func:`_identity`, which includes the status-change time a restored modification
    time cannot hide) differs from the one recorded in ``.verified.json`` when it last matched,
    so an unchanged tree costs one ``stat`` per file and an edited one is always hashed.
    """
    folder = Path(raw_dir) / dataset_id
    manifest = folder / "manifest.json"
    if not manifest.is_file():
        return
    stamp_path = folder / VERIFIED_STAMP
    try:
        stamp = read_json(stamp_path, "verification stamp") if stamp_path.is_file() else {}
    except InputDataError:
        stamp = {}  # damaged: every file is hashed again and the stamp rewritten
    verified: dict[str, list[int | str]] = {}
    for raw in get(dataset_id).files:
        path = raw_path(raw_dir, dataset_id, raw)
        repair = (f"restore it with `rm -f {path} {manifest}` and run snakemake again (fetch_raw copies "
                  "the verified file back from the mirror or downloads it)")
        if not path.is_file():
            raise InputDataError(f"raw file {path} is missing though {manifest} lists it; {repair}")
        size = path.stat().st_size
        if size != raw.size:
            raise InputDataError(f"raw file {path} has {size:,} bytes, not the verified "
                                 f"{raw.size:,} (truncated or replaced); {repair}")
        entry: list[int | str] = [*_identity(path), raw.sha256]
        if (stamp.get(raw.name) if isinstance(stamp, dict) else None) != entry \
                and sha256_file(path) != raw.sha256:
            raise InputDataError(f"raw file {path} changed after it was verified (wrong SHA-256); {repair}")
        verified[raw.name] = entry
    if verified != stamp:
        with contextlib.suppress(OSError):  # a read-only raw folder: hash again next time
            write_json(verified, stamp_path)


def none_available_message(datasets: list[str], raw_dir: Path, mirror: Path | None) -> str:
    """One paragraph for a run whose requested data sets are all unavailable (spec E1.1)."""
    lines = [f"none of the requested data sets ({', '.join(datasets)}) is available: their raw files "
             f"are neither in {raw_dir}/<id>/ nor in the mirror "
             f"({mirror if mirror is not None else 'none configured: $MPDP_DATA_MIRROR or config key data_mirror'}), "
             "and downloading is off (mirror set or allow_download: false). Needed:"]
    for ds in datasets:
        for raw in get(ds).files:
            lines.append(f"  {ds}: {raw.name} (SHA-256 {raw.sha256}) at {raw_path(raw_dir, ds, raw)} "
                         f"or gzipped at <mirror>/{raw.mirror_path}")
    lines.append("Add the files, set allow_download: true on a machine with internet access, or "
                 "request other data sets with --config 'datasets=[...]'.")
    return "\n".join(lines)


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
        log(f"{info.id}: {raw.name} present in {shown(dest.parent)} (SHA-256 verified)")
        return dest
    mirror_file = Path(mirror) / raw.mirror_path if mirror is not None else None
    if mirror_file is not None and mirror_file.is_file():
        _from_mirror(mirror_file, raw, dest)
        log(f"{info.id}: {raw.name} copied from the mirror, {in_mirror(raw)} (SHA-256 verified)")
        return dest
    if not allow_download:
        raise DatasetUnavailableError(_unavailable_message(info, raw, dest, mirror, None))
    return _download(info, raw, dest, mirror, log)


def _check_existing(dest: Path, raw: RawFile) -> None:
    actual = sha256_file(dest)
    if actual != raw.sha256:
        raise ChecksumMismatchError(
            f"raw file {shown(dest)} has the wrong SHA-256.\n"
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
            f"mirror copy {in_mirror(raw)} does not hold the pinned {raw.name}: the SHA-256 of "
            f"its decompressed content is wrong.\n"
            f"  expected: {raw.sha256}\n"
            f"  actual:   {exc.actual}\n"
            f"Nothing was written to {shown(dest.parent)}. Replace the mirror copy with a gzip copy "
            f"(gzip -9 -n) of the unmodified upstream file ({raw.size:,} bytes uncompressed), "
            f"or remove it so that the file is downloaded, and rerun."
        ) from None
    except (OSError, EOFError, zlib.error, zipfile.BadZipFile) as exc:
        if isinstance(exc, OSError) and exc.errno is not None:
            raise  # the disk, not the copy (mpdp.pipeline.runner names the file)
        raise InputDataError(
            f"mirror copy {in_mirror(raw)} of {raw.name} cannot be decompressed ({type(exc).__name__}: {exc}; "
            f"damaged or truncated); nothing was written to {shown(dest.parent)}. Replace it with a gzip copy "
            f"(gzip -9 -n) of the upstream file ({raw.size:,} bytes, SHA-256 {raw.sha256}) and rerun."
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
    """Try each upstream source in turn with pooch; the first verified one wins."""
    failures: list[str] = []
    mismatches: list[str] = []
    dest.parent.mkdir(parents=True, exist_ok=True)
    for source in raw.sources:
        with tempfile.TemporaryDirectory(prefix=".download-", dir=dest.parent) as tmp_dir:
            try:
                log(f"{info.id}: {raw.name}: downloading {source.url}")
                product = _retrieve(source, raw, Path(tmp_dir))
                _install(product, raw, dest, verified=not source.unpack)
            except _WrongContent as exc:
                log(f"{info.id}: {raw.name}: {source.url} gave content with the wrong SHA-256")
                mismatches.append(f"{source.url}: actual SHA-256 {exc.actual}")
                continue
            except (OSError, EOFError, zlib.error, ValueError, KeyError, zipfile.BadZipFile) as exc:
                log(f"{info.id}: {raw.name}: {source.url} failed ({_reason(exc)})")
                failures.append(f"{source.url} ({_reason(exc)})")
                continue
        log(f"{info.id}: {raw.name} downloaded from {source.url} (SHA-256 verified)")
        return dest
    if mismatches:
        raise ChecksumMismatchError(
            f"every download of {raw.name} that succeeded has the wrong SHA-256 "
            f"(expected {raw.sha256}):\n  " + "\n  ".join(mismatches + failures) + "\n"
            f"Nothing was written to {shown(dest.parent)}. The upstream file may have changed; "
            f"obtain the original file and put it at {shown(dest)}."
        )
    raise DatasetUnavailableError(_unavailable_message(info, raw, dest, mirror, failures))


#: pooch's message when a download does not match ``known_hash``
_POOCH_MISMATCH = re.compile(r"does not match the known hash: expected \S+ but got (?P<actual>[0-9a-f]+)")


def _retrieve(source: Source, raw: RawFile, folder: Path) -> Path:
    """Download ``source.url`` into ``folder`` with :func:`pooch.retrieve` and unpack it.

    A source that is the raw file itself is checked by pooch against the pin
    (``known_hash``); an archive is unpacked by pooch's processors and the product is
    checked by :func:`_install`. Raises _WrongContent on a hash mismatch.
    """
    pooch.get_logger().setLevel("WARNING")
    try:
        out = pooch.retrieve(
            source.url,
            known_hash=None if source.unpack else f"sha256:{raw.sha256}",
            fname="download",
            path=folder,
            processor=_Unpack(source.unpack) if source.unpack else None,
            downloader=_downloader(source.url),
        )
    except ValueError as exc:
        if match := _POOCH_MISMATCH.search(str(exc)):
            raise _WrongContent(match["actual"]) from None
        raise
    return Path(out)


class _Unpack:
    """A pooch processor applying :attr:`Source.unpack` in order (gzip, zip members, nested)."""

    def __init__(self, steps: tuple[str, ...]) -> None:
        self.steps = steps

    def __call__(self, fname: str, action: str, pup: object) -> str:
        for i, step in enumerate(self.steps):
            if step == "gzip":
                fname = pooch.Decompress(method="gzip", name=f"step{i}")(fname, action, pup)
            elif step.startswith("zip:"):
                member = step.removeprefix("zip:")
                pooch.Unzip(members=[member], extract_dir=f"step{i}")(fname, action, pup)
                fname = str(Path(fname).parent / f"step{i}" / member)
                if not Path(fname).is_file():
                    raise KeyError(member)
            else:
                raise ValueError(f"unknown unpack step {step!r}")
        return fname


def _downloader(url: str) -> Callable[..., None]:
    """pooch's downloader for the URL's protocol (HTTP(S), FTP, …); ``file://`` is copied."""
    if url.startswith("file://"):
        return _copy_file_url
    if url.startswith(("http://", "https://")):
        return pooch.HTTPDownloader(timeout=TIMEOUT_S, headers={"User-Agent": USER_AGENT})
    return pooch.downloaders.choose_downloader(url)


def _copy_file_url(url: str, output_file: str | BinaryIO, pup: object = None, check_only: bool = False) -> None:
    """A pooch downloader for ``file://`` URLs (local copies of an upstream site)."""
    path = Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))
    if check_only:
        return
    with open(path, "rb") as src:
        if isinstance(output_file, str):
            with open(output_file, "wb") as out:
                shutil.copyfileobj(src, out, CHUNK)
        else:
            shutil.copyfileobj(src, output_file, CHUNK)


def _install(product: Path, raw: RawFile, dest: Path, verified: bool) -> None:
    """Move the unpacked download into place atomically once its hash matches the pin."""
    if not verified:
        actual = sha256_file(product)
        if actual != raw.sha256:
            raise _WrongContent(actual)
    with atomic_path(dest) as tmp:
        product.replace(tmp)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return f"archive member {exc} not found"
    return f"{type(exc).__name__}: {exc}"


def _unavailable_message(
    info: DatasetInfo,
    raw: RawFile,
    dest: Path,
    mirror: Path | None,
    failures: list[str] | None,
) -> str:
    """What is missing, where the pipeline looked, and exactly where to put the file."""
    where_mirror = (
        f"{in_mirror(raw)} (absent; {MIRROR_ROOT} is config key data_mirror or $MPDP_DATA_MIRROR)"
        if mirror is not None
        else "no mirror configured (config key data_mirror or $MPDP_DATA_MIRROR)"
    )
    if failures is None:
        tried = "downloads not allowed (config key allow_download); upstream URLs:\n    " + (
            "\n    ".join(s.url for s in raw.sources)
        )
    else:
        tried = "downloads tried, all failed:\n    " + "\n    ".join(failures)
    return (
        f"{info.display_name} ({info.id}): raw file {raw.name} is not available.\n"
        f"  expected SHA-256 of {raw.name} (uncompressed, {raw.size:,} bytes): {raw.sha256}\n"
        f"  looked in: {shown(dest)} (absent); mirror: {where_mirror}\n"
        f"  {tried}\n"
        f"To fix it, obtain {raw.name} (see {info.homepage} or the URLs above) and do one of:\n"
        f"  - put it, uncompressed, at {shown(dest)}, or\n"
        f"  - put a gzip copy (gzip -9 -n) at {in_mirror(raw)}, or\n"
        f"  - on a machine with internet access, set allow_download: true to download it,\n"
        f"then rerun. Runs over the other data sets do not need this file."
    )
