"""A bootable image's boot unit says on the console when it starts, and the QEMU boot benchmark waits for exactly
that line (the benchmark itself boots an image: benchmarks/qemu_boot.py, minutes under TCG, not run here)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from clusterforge.image import bootable
from tests.conftest import ROOT


def test_the_steps_write_the_console_drop_in_of_the_boot_unit(tmp_path: Path) -> None:
    """The step run on the bake node writes exactly CONSOLE_UNIT (run here with the path moved under tmp_path)."""
    (step,) = [s for s in bootable.STEPS if bootable.CONSOLE_DROPIN in " ".join(s)]
    target = tmp_path / bootable.CONSOLE_DROPIN.lstrip("/")
    script = step[2].replace(str(Path(bootable.CONSOLE_DROPIN).parent), str(target.parent))
    subprocess.run([*step[:2], script], check=True)
    unit = target.read_text()
    assert unit == bootable.CONSOLE_UNIT
    assert "[Service]" in unit and "StandardOutput=journal+console" in unit
    assert f'ExecStartPre=/bin/echo "{bootable.BOOT_LINE} %H"' in unit
    assert bootable.CONSOLE_DROPIN.startswith("/etc/systemd/system/clusterforge-boot.service.d/")


def test_the_benchmark_watches_for_the_boot_units_line() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import qemu_boot
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    patterns = dict((key, pattern) for key, _, pattern in qemu_boot.STEPS)
    assert patterns["boot_unit"].search(f"{bootable.BOOT_LINE} qemu-0001")
    assert not patterns["boot_unit"].search("         Starting clusterforge-boot.service - clusterforge boot phase")
    assert patterns["init"].search("[    1.873012] Run /init as init process")


def test_the_benchmark_says_what_is_missing_and_exits_2() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks/qemu_boot.py"), "--image", "x"],
                          env={**os.environ, "PATH": "/nonexistent"}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "qemu-system-x86_64 is not installed (Debian: apt-get install qemu-system-x86)" in done.stderr
    assert "Traceback" not in done.stderr
