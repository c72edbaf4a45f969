"""Config validation: real profiles load, bad keys and values stop with the key named."""

from pathlib import Path

import pytest
import yaml

from mpdp import config
from mpdp.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["config.yaml", "smoke.yaml"])
def test_profiles_validate(name):
    cfg = config.load(ROOT / "config" / name)
    assert cfg["wddp"]["cv"]["folds"] == 5
    assert set(cfg["datasets"]) <= set(cfg["wddp"]["u_grid"])


def _full() -> dict:
    return yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


def test_typo_names_the_key():
    cfg = _full()
    cfg["wddp"]["lamda"] = 0.1
    with pytest.raises(ConfigError, match=r"wddp.*lamda"):
        config.validate(cfg)


def test_bad_value_names_the_key():
    cfg = _full()
    cfg["wddp"]["eps_grid"] = [0.1, -1.0]
    with pytest.raises(ConfigError, match=r"wddp\.eps_grid\.1"):
        config.validate(cfg)


def test_odd_m_in_u_settings_rejected():
    cfg = _full()
    cfg["wddp"]["u_settings"][0]["m"] = 7
    with pytest.raises(ConfigError, match=r"wddp\.u_settings\.0\.m"):
        config.validate(cfg)


def test_missing_u_grid_for_dataset():
    cfg = _full()
    del cfg["wddp"]["u_grid"]["adult"]
    with pytest.raises(ConfigError, match="u_grid"):
        config.validate(cfg)


def test_defaults_filled_and_input_untouched():
    cfg = _full()
    del cfg["wddp"]["dedup"]
    out = config.validate(cfg)
    assert out["wddp"]["dedup"] is True
    assert "dedup" not in cfg["wddp"]


def test_mirror_env_and_download_auto(tmp_path, monkeypatch):
    cfg = config.validate(_full())
    monkeypatch.delenv(config.MIRROR_ENV, raising=False)
    assert config.data_mirror(cfg) is None and config.allow_download(cfg)
    monkeypatch.setenv(config.MIRROR_ENV, str(tmp_path))
    assert config.data_mirror(cfg) == tmp_path.resolve()
    assert not config.allow_download(cfg)
    monkeypatch.setenv(config.MIRROR_ENV, str(tmp_path / "nope"))
    with pytest.raises(ConfigError, match="not a folder"):
        config.data_mirror(cfg)


def test_config_hash_is_stable():
    a = config.validate(_full())
    assert config.config_hash(a) == config.config_hash(config.validate(_full()))


def test_command_line_strings_are_coerced():
    cfg = _full()
    cfg["wddp"]["eta"] = "0.5"
    cfg["wddp"]["reps"] = "3"
    cfg["wddp"]["dedup"] = "false"
    cfg["max_records"] = "null"
    out = config.validate(cfg)
    assert out["wddp"]["eta"] == 0.5 and out["wddp"]["reps"] == 3
    assert out["wddp"]["dedup"] is False and out["max_records"] is None
    assert out["datasets"] == cfg["datasets"]


def test_job_environment_single_thread_and_avx512_kernels():
    from mpdp.pipeline.runner import job_environment

    plain = job_environment("flags\t\t: fpu sse avx2\n")
    assert plain["OMP_NUM_THREADS"] == "1" and "OPENBLAS_CORETYPE" not in plain
    fast = job_environment("flags\t\t: avx2 avx512f avx512dq avx512cd avx512bw avx512vl\n")
    assert fast["OPENBLAS_CORETYPE"] == "SKYLAKEX"
