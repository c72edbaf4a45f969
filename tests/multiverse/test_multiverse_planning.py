"""The multiverse's alternatives are validated at planning (issue 38, item 6): an unknown key or
an impossible value stops the run before any job, in one line naming the choice, key and value."""

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from mpdp import config
from mpdp.errors import ConfigError
from mpdp.multiverse import spec
from mpdp.pipeline import planning

ROOT = Path(__file__).resolve().parents[2]
AVAILABLE = ["kddcup99", "adult", "bank", "breast_cancer", "credit_card"]


def _cfg(name: str = "smoke.yaml", choices: list | None = None, base: dict | None = None) -> dict:
    cfg = config.load(ROOT / "config" / name)
    if choices is not None:
        cfg["multiverse"]["choices"] = choices
    if base is not None:
        cfg["multiverse"]["base"] = base
    return config.validate(cfg)


@pytest.mark.parametrize("name", ["config.yaml", "smoke.yaml"])
def test_the_shipped_multiverse_plans_and_covers_ten_choices(name):
    cfg = _cfg(name)
    planning.check_multiverse(cfg, AVAILABLE, {})
    choices = cfg["multiverse"]["choices"]
    assert len({c["choice"] for c in choices}) >= 10
    keys = {c["key"] for c in choices}
    # the [REC] choices issue 38 names (leftover records and the size law have no config key yet)
    assert {"wddp.lambda", "preprocess.intercept", "split.test_frac", "wddp.init_std", "wddp.tau_frac",
            "preprocess.bank_keep_duration", "preprocess.breast_cancer_missing", "admm.main_topology",
            "admm.P", "admm.tune_alpha", "voting.lambda_grid", "voting.val_frac"} <= keys
    assert any(k.startswith("wddp.cv.") for k in keys)
    # issue 48: the E7 alternatives that have a config key now (#8, #9, #12, #23)
    assert {"preprocess.row_scaling", "preprocess.scaling_bounds", "wddp.small_group_frac", "voting.tie_break"} <= keys
    if name == "config.yaml":  # the CV scope (#15; smoke fixes η, no CV) and KDDCup99 in the set
        assert "wddp.cv.scope" in keys and "preprocess.kdd_sample_size" in keys
        default = spec.universe_config(cfg, spec.universes(cfg)[0])
        assert "kddcup99" in default["datasets"] and "kddcup99" in default["voting"]["multiclass_datasets"]
    assert set(spec.SELECTION_KNOBS) <= keys  # issue 43: the private selections' knobs
    # the reseeding baseline (issue 48): the default with another root seed, and with another split seed
    assert [u.settings for u in spec.universes(cfg) if u.kind == "reseed"] == [{"root_seed": 1}, {"split.seed": 1}]
    for c in choices:  # every alternative really differs from the default it is compared with
        default = spec.get(spec.universe_config(cfg, spec.universes(cfg)[0]), c["key"])
        assert all(v != default for v in c["values"]), c["choice"]


@pytest.mark.parametrize(("choice", "match"), [
    ({"choice": "typo", "key": "wddp.lamda", "values": [0.1], "source": "x"},
     r"^config key 'multiverse\.choices\.0\.key' \(choice 'typo'\): 'wddp\.lamda' is not a key"),
    ({"choice": "split", "key": "split.test_frac", "values": [0.3, 1.5], "source": "x"},
     r"^config key 'multiverse\.choices\.0' \(choice 'split', split\.test_frac = 1\.5\): .*"
     r"config key 'split\.test_frac': 1\.5 is greater than or equal to the maximum of 1"),
    ({"choice": "h1", "key": "voting.h1_M", "values": [7], "source": "x"},  # planning, not the schema
     r"^config key 'multiverse\.choices\.0' \(choice 'h1', voting\.h1_M = 7\): .*'voting\.h1_M': 7 is not in"),
    ({"choice": "bc", "key": "preprocess.breast_cancer_missing", "values": ["mean"], "source": "x"},
     r"choice 'bc', preprocess\.breast_cancer_missing = \"mean\"\).*'mean' is not one of"),
])
def test_a_bad_alternative_is_named_in_one_line(choice, match):
    cfg = _cfg(choices=[choice])
    with pytest.raises(ConfigError, match=match) as err:
        planning.check(cfg, AVAILABLE, {}, multiverse=True)
    assert "\n" not in str(err.value)
    if choice["choice"] != "typo":  # issue 58: a universe's invalid config never stops a plain build
        planning.check(cfg, AVAILABLE, {})
    else:  # the multiverse section itself names a key this config lacks: refused on every build
        with pytest.raises(ConfigError, match=match):
            planning.check(cfg, AVAILABLE, {})


def test_a_bad_base_key_is_named():
    with pytest.raises(ConfigError, match=r"^config key 'multiverse\.base\.wddp\.repz': 'wddp\.repz' is not a key"):
        planning.check(_cfg(base={"wddp.repz": 2}), AVAILABLE, {})


def test_universes_and_their_configs():
    cfg = _cfg(choices=[{"choice": "lam", "key": "wddp.lambda", "values": [0.0, 0.01], "source": "E7 #4"},
                        {"choice": "grid", "key": "voting.lambda_grid", "values": [[1e-4, 0.1]], "source": "E5"}],
               base={"wddp.reps": 3})
    us = spec.universes(cfg)
    # the reseeded defaults (issue 48: multiverse.reseeds, by default root_seed and split.seed) come first
    assert [u.id for u in us] == ["default", "reseed=root_seed_1", "reseed=split.seed_1", "lam=0.0", "lam=0.01",
                                  "grid=0.0001_0.1"]
    us = [u for u in us if u.kind != "reseed"]
    default, lam0 = (spec.universe_config(cfg, u) for u in us[:2])
    assert "multiverse" not in default and default["wddp"]["reps"] == 3 == lam0["wddp"]["reps"]
    assert lam0["wddp"]["lambda"] == 0.0 and default["wddp"]["lambda"] == cfg["wddp"]["lambda"]
    # the alternative is the only difference from the default universe
    assert {k for k in lam0 if lam0[k] != default[k]} == {"wddp"}
    assert {k for k in lam0["wddp"] if lam0["wddp"][k] != default["wddp"][k]} == {"lambda"}
    assert cfg["wddp"]["lambda"] != 0.0  # the validated config itself is untouched


@pytest.mark.parametrize("name", ["config.yaml", "smoke.yaml"])
def test_the_training_split_bounds_run_on_the_fixed_split(name):
    """issue 60: scaling_bounds: train_split needs the fixed split, so its choice sets
    split.per_repetition: false too (``also``); without it the universe is refused."""
    cfg = _cfg(name)
    by_id = {u.id: u for u in spec.to_run(cfg)}
    bounds = spec.universe_config(cfg, by_id["scaling_bounds=train_split"])
    assert bounds["preprocess"]["scaling_bounds"] == "train_split" and bounds["split"]["per_repetition"] is False
    config.validate(bounds)
    fixed = spec.universe_config(cfg, by_id["split_design=false"])  # the fixed split as an alternative
    assert fixed["split"]["per_repetition"] is False and fixed["preprocess"]["scaling_bounds"] == "full_data"
    default = spec.universe_config(cfg, spec.universes(cfg)[0])
    assert default["split"]["per_repetition"] is True
    # the choice without its also: the universe's config is refused (in one line by the multiverse's planning;
    # on the smoke profile only, the full config's planning of every universe takes long)
    choice = next(c for c in cfg["multiverse"]["choices"] if c["choice"] == "scaling_bounds")
    bare = _cfg(name, choices=[{k: v for k, v in choice.items() if k != "also"}])
    with pytest.raises(ConfigError, match=r"train_split takes the min-max bounds"):
        config.validate(spec.universe_config(bare, next(u for u in spec.universes(bare)
                                                          if u.choice == "scaling_bounds")))
    if name == "smoke.yaml":
        with pytest.raises(ConfigError, match=r"^config key 'multiverse\.choices\.0' \(choice 'scaling_bounds'.*"
                                              r"train_split takes the min-max bounds"):
            planning.check(bare, AVAILABLE, {}, multiverse=True)


def test_also_is_set_with_every_value_and_checked():
    also = {"choice": "bounds", "key": "preprocess.scaling_bounds", "values": ["train_split"], "source": "x",
            "also": {"split.per_repetition": False, "split.seed": 3}}
    lam = {"choice": "lam", "key": "wddp.lambda", "values": [0.0], "source": "x"}
    cfg = _cfg(choices=[also, lam])
    u = next(u for u in spec.universes(cfg) if u.choice == "bounds")
    assert u.id == "bounds=train_split"  # the folder names the choice's value only
    assert u.settings == {"preprocess.scaling_bounds": "train_split", "split.per_repetition": False, "split.seed": 3}
    ucfg = spec.universe_config(cfg, u)
    assert ucfg["split"] == {**cfg["split"], "per_repetition": False, "seed": 3}
    assert not spec.repeats_default(cfg, u)
    lam_u = next(u for u in spec.universes(cfg) if u.choice == "lam")
    assert lam_u.settings == {"wddp.lambda": 0.0}  # a choice without also sets its key alone
    # a joint combination that picks the choice sets its also keys too, and counts as one choice
    joint = _cfg(choices=[also, lam])
    joint["multiverse"]["joint"] = {"choices": ["bounds", "lam"], "sample": 5, "seed": 0}
    combos, total = spec.joint_sample(joint)
    assert total == 1 and combos == [{"preprocess.scaling_bounds": "train_split", "wddp.lambda": 0.0,
                                      "split.per_repetition": False, "split.seed": 3}]
    with pytest.raises(ConfigError, match=r"^config key 'multiverse\.choices\.0\.also\.split\.per_repetiton' "
                                          r"\(choice 'bounds'\): 'split\.per_repetiton' is not a key"):
        planning.check(_cfg(choices=[{**also, "also": {"split.per_repetiton": False}}]), AVAILABLE, {})
    with pytest.raises(ConfigError, match=r"^config key 'multiverse\.choices\.0\.also': sets the choice's own key"):
        spec.universes(_cfg(choices=[{**also, "also": {"preprocess.scaling_bounds": "full_data"}}]))
    with pytest.raises(ConfigError, match=r"multiverse\.choices\.0\.also\.split.*is a whole section"):
        planning.check(_cfg(choices=[{**also, "also": {"split": {"seed": 1}}}]), AVAILABLE, {})


def test_the_training_split_bounds_are_refused_with_a_split_per_repetition():
    raw = config.load(ROOT / "config" / "smoke.yaml")
    raw["preprocess"]["scaling_bounds"] = "train_split"
    with pytest.raises(ConfigError, match=r"^config key 'preprocess\.scaling_bounds': train_split .*"
                                          r"set split\.per_repetition: false with it") as err:
        config.validate(raw)
    assert "\n" not in str(err.value)
    raw["split"]["per_repetition"] = False
    assert config.validate(raw)["preprocess"]["scaling_bounds"] == "train_split"


def test_a_universe_declared_twice_is_refused():
    cfg = _cfg(choices=[{"choice": "lam", "key": "wddp.lambda", "values": [0.0, 0.0], "source": "x"}])
    with pytest.raises(ConfigError, match=r"universes \['lam=0\.0'\] declared twice"):
        planning.check(cfg, AVAILABLE, {})


@pytest.mark.slow
def test_snakemake_multiverse_stops_at_planning(tmp_path, mirror):
    for name in ("Snakefile", "workflow", "config", "notebooks", "environment.yml"):
        (tmp_path / name).symlink_to(ROOT / name)
    bad = tmp_path / "bad.yaml"
    bad.write_text("multiverse:\n  choices:\n    - {choice: typo, key: admm.PP, values: [3], source: x}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "multiverse", "--configfile", "config/smoke.yaml", str(bad)],
        cwd=tmp_path, env={**os.environ, "MPDP_DATA_MIRROR": str(mirror)}, capture_output=True, text=True)
    assert proc.returncode != 0
    assert "mpdp: config key 'multiverse.choices.0.key' (choice 'typo'): 'admm.PP' is not a key" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "data" / "multiverse").exists()


@pytest.mark.slow
def test_a_universe_whose_run_fails_is_recorded_not_raised(tmp_path, mirror, monkeypatch):
    """The nested run stops at its own planning (here a config no outer planning would pass):
    status.json records the failure and its reason, and the collection reads it as failed."""
    from mpdp.multiverse import collect, universe

    root = tmp_path / "root"
    root.mkdir()
    for name in ("Snakefile", "workflow", "config", "notebooks", "environment.yml"):
        (root / name).symlink_to(ROOT / name)
    monkeypatch.setenv("MPDP_DATA_MIRROR", str(mirror))
    cfg = _cfg()
    u = next(x for x in spec.universes(cfg) if x.kind == "choice")
    bad = spec.universe_config(cfg, u)
    bad["voting"]["h1_M"] = 7  # not in voting.M_grid: the nested planning refuses it
    folder = root / spec.ROOT / u.id
    monkeypatch.chdir(root)  # the outer run's working directory: its data/raw is shared
    status = universe.run(u, folder, root, bad, 1, folder / "status.json", root / "logs" / "u.log")
    assert not status["ok"] and status["returncode"] != 0
    assert "voting.h1_M" in status["error"]
    assert (folder / "data" / "raw").resolve() == (root / "data" / "raw").resolve()
    result = universe.load(u, folder / "status.json")
    assert result.verdicts is None and "voting.h1_M" in result.error
    default = pd.DataFrame([{"study": "wddp", "claim_id": "C1", "reading": "paper", "claim": "c",
                             "verdict": "HOLDS", "n_informative": 3}])
    assert collect.compare(collect.Result(spec.universes(cfg)[0], default), result)["outcome"].tolist() == ["failed"]


def test_a_study_switched_off_is_not_varied_and_its_base_keys_are_skipped():
    """A config without an optional study's section (e.g. no ``admm:``) still plans its multiverse:
    the base keys and the choices inside the missing section are skipped, not reported as typos."""
    cfg = _cfg()
    assert any(c["key"].startswith("admm.") for c in cfg["multiverse"]["choices"])
    del cfg["admm"]
    planning.check_multiverse(cfg, AVAILABLE, {})
    assert not any(u.key and u.key.startswith("admm.") for u in spec.universes(cfg))
    assert "admm" not in spec.universe_config(cfg, spec.universes(cfg)[0])
    # a typo in a section that is present is still an error
    cfg["multiverse"]["base"] = {"wddp.nope": 1}
    with pytest.raises(ConfigError, match="multiverse.base.wddp.nope"):
        planning.check_multiverse(cfg, AVAILABLE, {})


def test_the_full_grid_runs_every_universe_on_the_main_config():
    """multiverse.full_grid (issue 48): no base, so the default universe's config is the main config
    (the main build) and an alternative differs from it in its key alone."""
    cfg = _cfg(choices=[{"choice": "lam", "key": "wddp.lambda", "values": [0.0], "source": "E7 #4"}],
               base={"wddp.reps": 3})
    cfg["multiverse"]["full_grid"] = True
    main = {k: v for k, v in cfg.items() if k != "multiverse"}
    default, *_, lam0 = (spec.universe_config(cfg, u) for u in spec.universes(cfg))
    assert default == main and default["wddp"]["reps"] != 3
    assert lam0["wddp"] == {**main["wddp"], "lambda": 0.0} and {k for k in lam0 if lam0[k] != main[k]} == {"wddp"}
    cfg["multiverse"]["full_grid"] = False
    assert spec.universe_config(cfg, spec.universes(cfg)[0])["wddp"]["reps"] == 3


@pytest.mark.slow
def test_a_universe_stops_only_the_multiverse_build(tmp_path, mirror):
    """Issue 58: with ``multiverse.full_grid`` the smoke profile's topology choice is invalid in its
    universe (smoke's ADMM runs the ring only). A plain call plans, without any multiverse warning
    (the shipped reseeds and choices equal nothing here); ``snakemake -n multiverse`` stops at
    planning in one line naming the choice."""
    for name in ("Snakefile", "workflow", "config", "notebooks", "environment.yml"):
        (tmp_path / name).symlink_to(ROOT / name)
    grid = tmp_path / "grid.yaml"
    grid.write_text("multiverse:\n  full_grid: true\n")
    env = {**os.environ, "MPDP_DATA_MIRROR": str(mirror)}

    def dry_run(*targets: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "snakemake", "-n", *targets, "--configfile", "config/smoke.yaml",
                               str(grid)], cwd=tmp_path, env=env, capture_output=True, text=True)

    plain = dry_run("data/raw/adult/manifest.json")
    assert plain.returncode == 0, plain.stderr[-2000:]
    assert "multiverse" not in plain.stderr
    proc = dry_run("multiverse")
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.startswith("mpdp: config key")]
    assert len(lines) == 1 and lines[0].startswith("mpdp: config key 'multiverse.choices.")
    assert "this universe's config is invalid" in lines[0] and "Traceback" not in proc.stderr
