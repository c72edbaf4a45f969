"""notebooks/explore.py reads the profile of the build it explores (issue 46): a smoke build explored
without $MPDP_CONFIGFILES was labelled "profile: full"."""

from __future__ import annotations

from pathlib import Path

import yaml

from mpdp import config
from mpdp.studies import explore

ROOT = Path(__file__).resolve().parents[2]


def test_the_build_config_recorded_by_the_report_gives_the_profile(tmp_path, monkeypatch):
    monkeypatch.delenv(explore.CONFIG_ENV, raising=False)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text((ROOT / "config" / "config.yaml").read_text())
    assert explore.load_config(tmp_path).get("profile") != "smoke"  # nothing says otherwise
    assert "mislabelled" in explore.config_source(tmp_path)
    smoke = config.load(ROOT / "config" / "smoke.yaml")  # what the rule report_html writes
    (tmp_path / "reports").mkdir()
    (tmp_path / explore.BUILD_CONFIG).write_text(yaml.safe_dump(smoke, sort_keys=True, allow_unicode=True))
    got = explore.load_config(tmp_path)
    assert got["profile"] == "smoke" and got == smoke
    assert explore.config_source(tmp_path).startswith("reports/config.yaml")
    # the environment variable still wins, and the source says so
    monkeypatch.setenv(explore.CONFIG_ENV, "config/config.yaml")
    assert explore.load_config(tmp_path).get("profile") != "smoke"
    assert "$MPDP_CONFIGFILES" in explore.config_source(tmp_path)
