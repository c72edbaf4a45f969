"""The voting section's tables name data sets and mechanisms as the reader knows them (issue 59)."""

from mpdp.studies.voting import report


def test_tables_and_mechanisms_by_display_name():
    assert report.table_name("kddcup99") == "KDDCup99"
    assert report.table_name("kddcup99_multiclass").endswith("(5 classes)")
    assert report.method_name("adult", "hamm_soft") != "hamm_soft"
    assert report.method_name("kddcup99_multiclass", "hamm_vote") == "B.2 majority vote"
    assert "_" not in report.method_name("adult", "jayaraman_output")
