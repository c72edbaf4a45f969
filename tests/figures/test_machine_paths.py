"""The report names no path of the building machine (issue 59), and a relative path it already
printed is left alone (a build outside the mirror's tree: ``../../work/shared/datasets`` holds the
mirror's absolute path after its dots and was once rewritten a second time)."""

from mpdp.report.build import machine_paths_removed


def test_absolute_paths_go_and_relative_ones_stay():
    ctx = {"repo_root": "/tmp/a/b", "invocation": {"mirror": "/work/shared/datasets"}}
    page = ("MPDP_DATA_MIRROR=../../../work/shared/datasets snakemake; mirror /work/shared/datasets/adult.gz; "
            "built in /tmp/a/b/data/x and /tmp/a/b")
    assert machine_paths_removed(page, ctx) == (
        "MPDP_DATA_MIRROR=../../../work/shared/datasets snakemake; mirror ../../../work/shared/datasets/adult.gz; "
        "built in data/x and .")
