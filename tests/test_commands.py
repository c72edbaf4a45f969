"""Every Snakemake command the README and the docs print is run (as a dry run) and works, in the
profile it is printed for (issue 46).

The report's own commands (How to reproduce it) are run after the smoke build, in
tests/test_workflow.py. Here: every ``snakemake …`` and ``bash scripts/reproduce.sh …`` command in
a code span or block of README.md and docs/**/*.md, planned with ``-n`` in a fresh working
directory as printed: a command naming a ``--configfile`` on that profile, one without on the full
config (Snakemake's default, ``config/config.yaml``), which is what it runs there (a full-config
command after a smoke build plans the full config's jobs, hence the README's note). A command with a
placeholder (``<target>``, ``{path}``, ``ACCOUNT``, ``--cores N``) is run with the placeholder
filled in where one value is obvious, and otherwise listed in :data:`NOT_RUN` with the test that
covers it instead.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

#: commands not planned here, and why (each is covered elsewhere)
NOT_RUN = {
    "--workflow-profile profiles/slurm": "needs a Slurm cluster: tests/slurm runs it on one",
    "--unlock": "removes a lock: nothing to plan",
    # docs/reruns.md's example of the wrong order (a target after --configfile is read as a config file)
    "snakemake --configfile config/smoke.yaml zz_f4": "printed as the wrong form, to be avoided",
}
#: placeholders filled with one value
FILL = {"<study target>": "zz", "<target>": "zz", "<file>": "reports/figures/fig07.png",
        "--cores N": "--cores 1"}

pytestmark = pytest.mark.slow


def printed_commands() -> list[tuple[str, str]]:
    """(file, command) of every snakemake / reproduce.sh command in a code span or block (the first
    file that prints each command)."""
    found = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        spans = re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
        spans += re.findall(r"(?<!`)`([^`\n]+)`(?!`)", re.sub(r"```.*?```", "", text, flags=re.S))
        for span in spans:
            for line in span.splitlines():
                line = line.split("#", 1)[0].strip()
                match = re.search(r"(?:^|\s|^\S+=\S+ )((?:\.venv/bin/)?snakemake\b.*|bash scripts/reproduce\.sh.*)$", line)
                if match:
                    found.append((str(path.relative_to(ROOT)), match[1].strip()))
    first: dict[str, str] = {}
    for where, command in found:
        first.setdefault(command, where)
    return [(where, command) for command, where in first.items()]


def dry_run_words(command: str) -> list[str] | None:
    """The command as a dry run in the profile it names (None: a fragment, not a whole command)."""
    for placeholder, value in FILL.items():
        command = command.replace(placeholder, value)
    words = shlex.split(command)
    if words[:2] == ["bash", "scripts/reproduce.sh"]:  # what the script runs after its setup
        words = ["snakemake", "--cores", "all", *words[2:]]
    words[0] = "snakemake"
    if words[-1].startswith("-") and words[-1] not in ("--unlock", "--summary", "--lint") and "=" not in words[-1]:
        return None  # e.g. "snakemake --config" in a sentence about the option
    if not any(w in words for w in ("--cores", "-c", "--workflow-profile")):
        words[1:1] = ["--cores", "1"]
    end = words.index("--") if "--" in words else len(words)  # after "--" only targets follow
    return [*words[:end], "-n", *words[end:]]


def test_a_command_is_planned_in_the_profile_it_names():
    assert dry_run_words("snakemake --cores all fig07") == ["snakemake", "--cores", "all", "fig07", "-n"]
    smoke = dry_run_words("snakemake --cores all --force reports/figures/fig07.png --configfile config/smoke.yaml")
    assert smoke == ["snakemake", "--cores", "all", "--force", "reports/figures/fig07.png", "--configfile",
                     "config/smoke.yaml", "-n"]


def test_the_docs_print_commands():
    commands = printed_commands()
    assert len(commands) >= 20, commands
    assert any("reports/figures/fig07.png" in c or "--force" in c for _, c in commands)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, mirror) -> Path:
    work = tmp_path_factory.mktemp("commands")
    for name in ("Snakefile", "workflow", "config", "notebooks", "environment.yml", "profiles"):
        (work / name).symlink_to(ROOT / name)
    return work


@pytest.mark.parametrize(("where", "command"), printed_commands())
def test_printed_command_plans(workdir, mirror, where, command):
    skip = NOT_RUN.get(command) or next((why for key, why in NOT_RUN.items() if key.startswith("--")
                                         and key in command), None)
    if skip:
        pytest.skip(f"{command!r} ({where}): {skip}")
    words = dry_run_words(command)
    if words is None:
        pytest.skip(f"{command!r} ({where}) is a fragment of a sentence, not a command")
    proc = subprocess.run([sys.executable, "-m", *words], cwd=workdir, capture_output=True, text=True,
                          env={**os.environ, "MPDP_DATA_MIRROR": str(mirror)}, timeout=600)
    assert proc.returncode == 0, (f"{where}: `{command}` fails as `{shlex.join(words)}`:\n"
                                  f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
