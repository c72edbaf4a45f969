"""Seeding an alternative universe from the default's results (issue 38, mpdp.multiverse.universe.seed)."""

import json
import os

from mpdp.multiverse import spec, universe


def _base(tmp_path):
    base = tmp_path / "default"
    (base / "data" / "results").mkdir(parents=True)
    (base / "data" / "results" / "table.csv").write_text("a,b\n1,2\n")
    os.utime(base / "data" / "results" / "table.csv", ns=(1_000_000_000_123, 1_000_000_000_123))
    (tmp_path / "raw").mkdir()
    (base / "data" / "raw").symlink_to(tmp_path / "raw")
    (base / ".snakemake" / "metadata").mkdir(parents=True)
    (base / ".snakemake" / "metadata" / "record").write_text("{}")
    (base / ".snakemake" / "locks").mkdir()
    return base


def test_seed_copies_results_with_their_time_stamps_and_the_job_records(tmp_path):
    base = _base(tmp_path)
    alt = tmp_path / "alt"
    (alt / "data").mkdir(parents=True)
    (alt / "data" / "raw").symlink_to(tmp_path / "raw")  # made by prepare(): left as it is
    assert universe.seed(alt, base)
    copied = alt / "data" / "results" / "table.csv"
    assert copied.read_text() == "a,b\n1,2\n" and not copied.is_symlink()
    assert copied.stat().st_mtime_ns == (base / "data" / "results" / "table.csv").stat().st_mtime_ns
    assert (alt / ".snakemake" / "metadata" / "record").is_file()
    assert not (alt / ".snakemake" / "locks").exists() and not (alt / ".snakemake" / "metadata.seeding").exists()
    assert (alt / "data" / "raw").is_symlink()
    # a universe with records of its own is never reseeded
    copied.write_text("changed by its own run")
    assert not universe.seed(alt, base)
    assert copied.read_text() == "changed by its own run"


def test_an_interrupted_seed_is_redone_and_a_failed_default_seeds_nothing(tmp_path):
    base = _base(tmp_path)
    alt = tmp_path / "alt"
    (alt / ".snakemake" / "metadata.seeding").mkdir(parents=True)  # a copy cut short
    assert universe.seed(alt, base) and (alt / ".snakemake" / "metadata" / "record").is_file()
    status = tmp_path / "status.json"
    status.write_text(json.dumps({"ok": False}))
    assert universe.seed_source([str(status)]) is None
    status.write_text(json.dumps({"ok": True}))
    assert universe.seed_source([str(status)]) == tmp_path
    assert universe.seed_source([]) is None
    # no job records in the default (it never ran): nothing to seed from
    empty = tmp_path / "empty"
    (empty / "data").mkdir(parents=True)
    assert not universe.seed(tmp_path / "alt2", empty)


def test_the_main_build_is_the_default_universe_of_the_full_grid(tmp_path):
    """multiverse.full_grid (issue 48): the default universe's status names the main build's claims
    tables and its folder, and the alternatives are seeded from the main build, without its raw
    data and without the universes it holds."""
    main = _base(tmp_path)
    (main / "data" / "multiverse" / "default").mkdir(parents=True)
    (main / "data" / "multiverse" / "default" / "status.json").write_text("{}")
    verdicts = main / "data" / "results" / "claims" / "verdicts.parquet"
    status_path = tmp_path / "status.json"
    status = universe.adopt_main_build(spec.universes({})[0], status_path, main, verdicts)
    assert json.loads(status_path.read_text()) == status
    assert status["ok"] and status["verdicts"] == str(verdicts.resolve()) and status["jobs_run"] == 0
    assert universe.seed_source([str(status_path)]) == main.resolve()
    alt = tmp_path / "alt"
    assert universe.seed(alt, universe.seed_source([str(status_path)]))
    assert (alt / "data" / "results" / "table.csv").is_file()
    assert not (alt / "data" / "multiverse").exists() and not (alt / "data" / "raw").exists()
