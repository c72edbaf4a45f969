"""The CPU facts behind the fused engine's block layouts (mpdp.cpu_caches, engine limits)."""

from pathlib import Path

import pytest

from mpdp import cpu_caches, engine


@pytest.fixture
def fake_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A /proc/cpuinfo and a cpu0 cache folder under tmp_path, read afresh."""
    cpuinfo = tmp_path / "cpuinfo"
    cache = tmp_path / "cache"
    monkeypatch.setattr(cpu_caches, "CPUINFO", cpuinfo)
    monkeypatch.setattr(cpu_caches, "CACHE_DIR", cache)
    cpu_caches.vendor.cache_clear()
    cpu_caches.l2_bytes.cache_clear()
    yield cpuinfo, cache
    cpu_caches.vendor.cache_clear()
    cpu_caches.l2_bytes.cache_clear()


def add_cache(cache: Path, index: int, level: int, kind: str, size: str) -> None:
    entry = cache / f"index{index}"
    entry.mkdir(parents=True)
    (entry / "level").write_text(f"{level}\n")
    (entry / "type").write_text(f"{kind}\n")
    (entry / "size").write_text(f"{size}\n")


@pytest.mark.parametrize(("text", "expected"), [
    ("2048K", 2 << 20), ("1M", 1 << 20), ("32768K\n", 32 << 20), ("512", 512), ("", None),
    ("K", None), ("0K", None), ("twoM", None), ("-4K", None),
])
def test_parse_size(text, expected):
    assert cpu_caches.parse_size(text) == expected


def test_reads_the_vendor_and_the_l2_of_cpu0(fake_machine):
    cpuinfo, cache = fake_machine
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
                       "processor\t: 1\nvendor_id\t: GenuineIntel\n")
    add_cache(cache, 0, 1, "Data", "48K")
    add_cache(cache, 1, 1, "Instruction", "32K")
    add_cache(cache, 2, 2, "Unified", "2048K")
    add_cache(cache, 3, 3, "Unified", "105M")
    assert cpu_caches.vendor() == "GenuineIntel"
    assert cpu_caches.l2_bytes() == 2 << 20


def test_missing_files_give_none(fake_machine):
    cpuinfo, cache = fake_machine
    assert cpu_caches.vendor() is None and cpu_caches.l2_bytes() is None
    cpu_caches.vendor.cache_clear()
    cpuinfo.write_text("processor\t: 0\nmodel name\t: something\n")
    add_cache(cache, 0, 1, "Data", "32K")
    assert cpu_caches.vendor() is None and cpu_caches.l2_bytes() is None


def test_layout_limits_by_cpu():
    amd = engine.fused_layout_limits("AuthenticAMD", 1 << 20)
    assert amd == (engine.AMD_TRANSPOSED_MAX_BYTES, engine.AMD_TRANSPOSED_WIDE_COLUMNS)
    assert engine.fused_layout_limits(None, None) == amd  # unknown L2: the earlier defaults
    intel_bytes, intel_wide = engine.fused_layout_limits("GenuineIntel", 2 << 20)
    # both copies of a transposed block fit the L2, with room for the rest of the step
    assert 2 * intel_bytes <= 2 << 20 and intel_bytes == int(engine.TRANSPOSED_L2_SHARE * (2 << 20))
    assert intel_wide == engine.L2_TRANSPOSED_WIDE_COLUMNS
    # the returned tables are copies: changing one leaves the module's defaults alone
    amd[1][16] = 1
    assert engine.AMD_TRANSPOSED_WIDE_COLUMNS[16] != 1


def test_this_machine_uses_its_own_limits():
    expected = engine.fused_layout_limits(cpu_caches.vendor(), cpu_caches.l2_bytes())
    assert expected == (engine.FUSED_TRANSPOSED_MAX_BYTES, engine.FUSED_TRANSPOSED_WIDE_COLUMNS)
    text = engine.fused_layout_description(16)
    assert f"{engine.FUSED_TRANSPOSED_MAX_BYTES / 2**20:.2f} MiB" in text
    wide = engine.FUSED_TRANSPOSED_WIDE_COLUMNS.get(16)
    assert (f"at least {wide} columns" in text) == (wide is not None)
