"""Each rule declares exactly the config keys it reads (mpdp.pipeline.rule_keys, issue 13 item 3)."""

from __future__ import annotations

import ast
import copy
import re
from pathlib import Path

import numpy as np
import pytest

from mpdp import config
from mpdp.config import UndeclaredKeyError
from mpdp.data import splits
from mpdp.mechanisms.gradient_batch import initial_point, train_batch
from mpdp.pipeline import rule_keys
from mpdp.studies.wddp import plan
from mpdp.studies.wddp.cv import cross_validate, eta_lookup, fixed_etas
from mpdp.studies.wddp.job import cv_selections, trivial_partition

ROOT = Path(__file__).resolve().parents[1]

#: keys that decide *which* jobs exist (wildcards, inputs, params such as partition layouts),
#: not what a job computes; a change adds or removes jobs instead of rerunning them
DAG_KEYS = {"profile", "data_mirror", "allow_download", "datasets", "wddp.m_grid", "wddp.u_settings",
            "wddp.u_grid",
            "limits"}  # read by planning's cost check only (issue 58): no output depends on it


def _smoke() -> dict:
    return config.load(ROOT / "config" / "smoke.yaml")


def _problem(n=160, p=5, seed=1):
    gen = np.random.default_rng(seed)
    X = gen.normal(size=(n, p))
    X /= np.linalg.norm(X, axis=1, keepdims=True) * np.sqrt(2)
    y = np.where(X @ gen.normal(size=p) + 0.1 * gen.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def test_restricted_config_raises_for_undeclared_keys():
    cfg = config.restrict(_smoke(), ("root_seed", "wddp.T", "split"), owner="rule 'x'")
    assert cfg["root_seed"] == 0 and cfg["wddp"]["T"] == 50 and cfg["split"]["test_frac"] == 0.2
    with pytest.raises(UndeclaredKeyError, match=r"config key 'wddp.eps_grid' is read by rule 'x'.*RULE_KEYS"):
        cfg["wddp"]["eps_grid"]
    with pytest.raises(UndeclaredKeyError, match="'max_records'"):
        cfg.get("max_records")
    assert "max_records" not in cfg


def test_every_config_key_is_read_by_a_rule_or_shapes_the_dag():
    """A new schema key fails here until a rule declares it (or it only shapes the DAG)."""
    cfg = _smoke()
    declared = {k for keys in rule_keys.RULE_KEYS.values() for k in keys}
    declared |= {k for keys in rule_keys.DATASET_KEYS.values() for k in keys} | DAG_KEYS
    uncovered = [k for k in rule_keys.all_keys(cfg)
                 if not any(k == d or k.startswith(d + ".") for d in declared)]
    assert uncovered == []
    for keys in rule_keys.RULE_KEYS.values():  # every declared key exists
        for key in keys:
            config.lookup(cfg, key)


def test_u_sweep_jobs_do_not_depend_on_the_eps_grid():
    cfg = _smoke()
    eps_keys = rule_keys.keys_for("train_job", cfg, dataset="adult", experiment="eps_sweep")
    u_keys = rule_keys.keys_for("train_job", cfg, dataset="adult", experiment="u_sweep")
    assert set(eps_keys) - set(u_keys) == {"wddp.eps_grid"}
    # a u-sweep job trains its data set's u grid, and no other data set's
    assert set(u_keys) - set(eps_keys) == {"wddp.u_grid.adult"}
    split = {"split.per_repetition": True, "split.seed": 0, "split.test_frac": 0.2}
    # one θ* per repetition's training records (issue 60); the fixed split's one θ* needs no wddp.reps
    assert rule_keys.settings(cfg, "optimum") == {"wddp.lambda": 1.0e-3, "wddp.reps": 2, **split}
    cfg["split"]["per_repetition"] = False
    assert rule_keys.settings(cfg, "optimum") == {"wddp.lambda": 1.0e-3, **split, "split.per_repetition": False}


@pytest.mark.parametrize("experiment", ["eps_sweep", "u_sweep"])
def test_a_training_batch_runs_on_its_declared_keys(experiment):
    cfg = _smoke()
    cfg["wddp"].update(T=5, reps=1)
    restricted = config.restrict(cfg, rule_keys.keys_for("train_job", cfg, dataset="adult",
                                                         experiment=experiment))
    X, y = _problem()
    job = (plan.Job("adult", "eps_sweep", None, None) if experiment == "eps_sweep"
           else plan.Job("adult", "u_sweep", 4, 0.05))
    etas = eta_lookup(fixed_etas(config.restrict(cfg, rule_keys.keys_for("learning_rates", cfg))))
    runs = plan.runs_for_job(restricted, job, etas)
    assert runs
    partition = trivial_partition(X.shape[0], 1)  # partitions are an input file, not config
    central = [r for r in runs if r.mode == "central"]
    theta0 = {0: initial_point(restricted["root_seed"], "toy", 0, X.shape[1], restricted["wddp"]["init_std"])}
    out = train_batch(central, X, y, partition, theta0, restricted["root_seed"], restricted["wddp"]["dtype"],
                      restricted["wddp"]["dedup"])
    assert np.isfinite(out.thetas).all()


@pytest.mark.parametrize("per_accountant", [False, True])  # the full config selects η per accountant
def test_cross_validation_runs_on_its_declared_keys(per_accountant):
    cfg = _smoke()
    cfg["wddp"].update(T=5, eta=None, eta_grid=[0.05, 1.0])
    cfg["wddp"]["cv"].update(folds=2, seeds=1, ref_m=2, per_accountant=per_accountant)
    keys = rule_keys.keys_for("learning_rates", cfg)
    # a selection per repetition (issue 60) also reads wddp.reps
    assert keys == (*rule_keys.RULE_KEYS["learning_rates:cv"], "wddp.reps")
    X, y = _problem()
    full = cross_validate(cfg, "toy", X, y)
    assert cross_validate(config.restrict(cfg, keys), "toy", X, y) == full
    pool = splits.Pool(X, y, 128, "toy")  # 160 records, 32 = ⌈0.2 · 160⌉ test records
    restricted = config.restrict(cfg, keys)
    per_rep = cross_validate(restricted, "toy", X, y, train_rows=cv_selections(restricted, pool))
    assert per_rep == cross_validate(cfg, "toy", X, y, train_rows=cv_selections(cfg, pool))
    # with η fixed, CV settings are not read: changing them must not rerun learning_rates
    assert "wddp.cv" not in rule_keys.keys_for("learning_rates", _smoke())


def _jobs() -> list[tuple[str, dict]]:
    """Every rule (variant) of RULE_KEYS with the wildcards it needs."""
    out = []
    for rule in rule_keys.RULE_KEYS:
        if rule.startswith("train_job:"):
            out += [("train_job", {"dataset": ds, "experiment": rule.split(":")[1]}) for ds in ("adult", "bank")]
        elif rule == "prepare":
            out += [(rule, {"dataset": ds}) for ds in rule_keys.DATASET_KEYS]
        else:
            out.append((rule, {}))
    return out


def _readers(cfg: dict, key: str) -> set[str]:
    """The rules whose ``settings`` param changes when ``key`` changes (= the jobs that rerun)."""
    changed = copy.deepcopy(cfg)
    *parents, last = key.split(".")
    node = changed
    for part in parents:
        node = node[part]
    node[last] = ("changed", node[last])
    return {rule for rule, wc in _jobs() if rule_keys.param(changed, rule, **wc) != rule_keys.param(cfg, rule, **wc)}


def test_a_key_change_reruns_exactly_its_readers():
    """Issue 37: the settings param of a job changes for exactly the keys its rule declares, for
    every key of the config; a few keys that used to rerun too much are pinned."""
    cfg = _smoke()
    for key in rule_keys.all_keys(cfg):
        declared = {rule for rule, wc in _jobs()
                    if any(key == k or key.startswith(k + ".") for k in rule_keys.keys_for(rule, cfg, **wc))}
        assert _readers(cfg, key) == declared, key
    assert _readers(cfg, "benchmark.primary_metric") == {"benchmark_ranking"}  # not every benchmark_job
    assert _readers(cfg, "voting.h2_eps") == {"voting_figure"}  # not every voting_train
    # δ_p is read by the training: the tables hold the Lemma 6 line at δ_p (column lemma6_bound)
    # ... and by the claims engine (V4's margin)
    assert _readers(cfg, "voting.delta_p") == {"voting_train", "voting_figure", "claims_tables"}
    assert "benchmark_job" in _readers(cfg, "benchmark.reference.m")  # the rest of the section still reruns it


def test_the_settings_param_is_one_short_line():
    """Issue 37: a rerun reason printed the whole config section twice (~2 KB per job)."""
    cfg = _smoke()
    for rule, wc in _jobs():
        value = rule_keys.param(cfg, rule, **wc)
        assert len(value) < 80 and "\n" not in value, value


SCRIPTS = sorted((ROOT / "workflow" / "scripts").glob("*.py"))


def _fence_calls(script: Path) -> list[tuple[str, set[str]]]:
    """The ``rule_config(sm.config, "<rule>", **wildcards)`` calls of ``script``: (rule, wildcard
    names). Fails if the script reads its config any other way: ``sm.config`` (or
    ``snakemake.config``) anywhere but as the first argument of ``rule_config``, or the config
    loaded or validated by hand."""
    tree = ast.parse(script.read_text())
    fenced: set[int] = set()
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "rule_config":
            assert len(node.args) == 2 and isinstance(node.args[1], ast.Constant), (script.name, ast.unparse(node))
            fenced.add(id(node.args[0]))
            calls.append((node.args[1].value, {k.arg for k in node.keywords}))
        if isinstance(node, ast.Attribute) and node.attr in ("validate", "load") and \
                isinstance(node.value, ast.Name) and node.value.id in ("config", "mpdp_config"):
            raise AssertionError(f"{script.name}: reads the config past the fence ({ast.unparse(node)})")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "config" and \
                isinstance(node.value, ast.Name) and node.value.id in ("sm", "snakemake"):
            assert id(node) in fenced, f"{script.name}: {ast.unparse(node)} read past rule_keys.rule_config"
    return calls


def test_every_job_script_reads_its_config_through_the_fence():
    """Issue 57: every script of workflow/scripts/ gets its config from rule_keys.rule_config (or
    reads none), under a rule that declares its keys, so reading an undeclared key fails at once;
    only the rules of WHOLE_CONFIG get all of it."""
    declared = {rule.split(":")[0] for rule in rule_keys.RULE_KEYS} | set(rule_keys.UNTRACKED_KEYS)
    readers = 0
    for script in SCRIPTS:
        calls = _fence_calls(script)
        assert len(calls) <= 1, script.name
        for rule, _ in calls:
            assert rule in declared or rule in rule_keys.WHOLE_CONFIG, (script.name, rule)
            readers += 1
    assert readers >= 20
    assert set(rule_keys.WHOLE_CONFIG) == {"report_html", "multiverse", "multiverse_universe", "reseeding_universe"}


@pytest.mark.parametrize("text, where", [
    ('cfg = config.validate(sm.config)\n', "config.validate"),
    ('cfg = rule_config(sm.config, "optimum")\nseed = sm.config["root_seed"]\n', "sm.config"),
    ('cfg = dict(snakemake.config)\n', "snakemake.config"),
])
def test_the_fence_check_catches_a_script_past_the_fence(tmp_path, text, where):
    script = tmp_path / "job.py"
    script.write_text("from mpdp import config\nfrom mpdp.pipeline.rule_keys import rule_config\n" + text)
    with pytest.raises(AssertionError, match=where.replace(".", r"\.")):
        _fence_calls(script)


@pytest.mark.parametrize("rule, wildcards, reads, undeclared", [
    ("admm_job", {}, ("admm", "P"), ("wddp", "T")),
    ("admm_figure", {}, ("admm", "P"), ("root_seed",)),
    ("voting_train", {}, ("voting", "delta_p"), ("voting", "h2_eps")),
    ("voting_figure", {}, ("voting", "h2_eps"), ("voting", "aux_frac")),
    ("benchmark_job", {}, ("benchmark", "delta"), ("benchmark", "primary_metric")),
    ("benchmark_collect", {}, ("benchmark", "selection"), ("benchmark", "delta")),
    ("ls_experiment", {"experiment": "ls_2"}, ("ls", "ls_2"), ("ls", "ls_3")),
    ("audit_table", {}, ("audit", "settings"), ("wddp",)),
    ("fetch_raw", {}, ("allow_download",), ("root_seed",)),
])
def test_a_fenced_job_reads_its_keys_and_no_other(rule, wildcards, reads, undeclared):
    cfg = rule_keys.rule_config(_smoke(), rule, **wildcards)
    node = cfg
    for part in reads:
        node = node[part]
    node = cfg
    with pytest.raises(UndeclaredKeyError, match=f"read by rule '{rule}'"):
        for part in undeclared:
            node = node[part]


def test_whole_config_rules_get_the_whole_validated_config():
    smoke = _smoke()
    for rule in rule_keys.WHOLE_CONFIG:
        assert rule_keys.rule_config(smoke, rule) == config.validate(dict(smoke))
    with pytest.raises(KeyError, match="declares no config keys"):
        rule_keys.rule_config(smoke, "no_such_rule")


def test_every_script_that_reads_its_rule_keys_gets_them_as_a_param():
    """Derived from the workflow: a script calling rule_config(sm.config, "<rule>") runs in rule
    blocks whose settings param is rule_keys.param(CFG, "<rule>" …) (or job_settings for
    train_job; the whole config's hash for a WHOLE_CONFIG rule but the multiverse collection,
    whose reason says why), so each key it may read reruns it; the keys of UNTRACKED_KEYS are
    deliberately no param."""
    smk = "\n".join(p.read_text() for p in sorted((ROOT / "workflow" / "rules").glob("*.smk")))
    blocks = re.split(r"\n(?=rule |use rule |checkpoint )", smk)
    for script in SCRIPTS:
        for rule, _ in _fence_calls(script):
            users = [b for b in blocks if f'"../scripts/{script.name}"' in b]
            assert users, script.name
            for block in users:
                if rule in rule_keys.UNTRACKED_KEYS:
                    assert "settings=" not in block, script.name
                    continue
                if rule == "train_job":
                    expected = r"settings=job_settings"
                elif rule in rule_keys.WHOLE_CONFIG and rule != "multiverse":
                    expected = r"settings=.*config_hash\("
                else:
                    expected = rf'settings=.*rule_keys\.param\(CFG, f?"{rule}[":]'
                assert re.search(expected, block), (script.name, block[:60])
