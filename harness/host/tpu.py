"""Google Cloud TPU chips as seen without JAX: whether one is attached (a PCI device of Google's
vendor id with a TPU's device id, as JAX's own check reads them), and what a chip held by another
program looks like: one process at a time may hold libtpu, so nothing here starts it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

PCI = Path("/sys/bus/pci/devices")
DEV = Path("/dev")
GOOGLE_VENDOR = "0x1ae0"
# Device ids of TPU chips (Google's other PCI devices, e.g. a gVNIC network card, are not chips).
CHIPS = {
    "0x0027": "TPU v2/v3",
    "0x0056": "TPU (no public name)",
    "0x005e": "TPU v4",
    "0x0062": "TPU v5p",
    "0x0063": "TPU v5e",
    "0x006f": "TPU v6e",
    "0x0076": "TPU7x",
}
# What a process that opens a chip another one holds says: libtpu's lockfile (seen with jax 0.10.2
# on a TPU v5e), or the check older jax releases made before loading libtpu.
HELD = ("libtpu multi-process lockfile", "TPU is already in use")


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def chips(pci: Path | None = None) -> list[str]:
    """The TPU chips attached here, by name (a v5e host with one chip: ``["TPU v5e"]``)."""
    found = []
    for device in sorted((pci or PCI).glob("*")):
        if _read(device / "vendor") == GOOGLE_VENDOR and _read(device / "device") in CHIPS:
            found.append(CHIPS[_read(device / "device")])
    return found


def device_files(dev: Path | None = None, environ: Mapping[str, str] | None = None) -> list[str]:
    """The chips' device files, where a container shows no PCI bus: ``/dev/accelN`` (TPU v2–v4,
    v5p), or ``/dev/vfio/N`` (v5e, v6e) where the TPU runtime's variables say this is a TPU host
    (another device passed through has such files too)."""
    dev = dev or DEV
    found = sorted(str(path) for path in dev.glob("accel[0-9]*"))
    tpu_host = "TPU_ACCELERATOR_TYPE" in (os.environ if environ is None else environ)
    vfio = sorted(str(path) for path in dev.glob("vfio/[0-9]*")) if tpu_host else []
    return found + vfio


def absence_reason(
    pci: Path | None = None, dev: Path | None = None, environ: Mapping[str, str] | None = None
) -> str | None:
    """None when a TPU chip is attached here, else why not, in words fit for a skipped session."""
    if chips(pci) or device_files(dev, environ):
        return None
    files = f"no TPU device files in {dev or DEV} (not a Cloud TPU VM?)"
    return f"no TPU chip among the PCI devices in {pci or PCI}, and {files}"


def held_elsewhere(output: str) -> str:
    """Why a process could not open the TPU: its ``output`` says another holds it ("" else)."""
    if not any(words in output for words in HELD):
        return ""
    return (
        "the TPU is held by another program (libtpu: one process at a time may open the chip): "
        "end it (`sudo lsof -w /dev/accel* /dev/vfio/*` names it) and run again; nothing of this "
        "process was kept"
    )
