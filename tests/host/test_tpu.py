"""TPU chips as the PCI bus lists them, and a chip another program holds, read without JAX."""

from harness.host import tpu

LOCKFILE = (
    "RuntimeError: Unable to initialize backend 'tpu': ABORTED: Internal error when accessing "
    'libtpu multi-process lockfile. Run "$ sudo rm /tmp/libtpu_lockfile".'
)


def pci_device(root, slot, vendor, device):
    folder = root / slot
    folder.mkdir(parents=True)
    (folder / "vendor").write_text(vendor + "\n")
    (folder / "device").write_text(device + "\n")


def test_a_tpu_chip_is_googles_vendor_with_a_tpus_device_id(tmp_path):
    pci_device(tmp_path, "0000:00:04.0", tpu.GOOGLE_VENDOR, "0x0042")  # gVNIC: Google's, no chip
    pci_device(tmp_path, "0000:00:03.0", "0x8086", "0x0063")  # another vendor's device
    no_dev = tmp_path / "dev"
    assert tpu.chips(tmp_path) == []
    assert "no TPU chip" in str(tpu.absence_reason(tmp_path, no_dev, {}))
    pci_device(tmp_path, "0000:00:05.0", tpu.GOOGLE_VENDOR, "0x0063")
    assert tpu.chips(tmp_path) == ["TPU v5e"]
    assert tpu.absence_reason(tmp_path, no_dev, {}) is None


def test_no_pci_bus_at_all_has_no_chip(tmp_path):
    assert tpu.chips(tmp_path / "absent") == []


def test_a_chip_held_by_another_program_is_named_in_one_line():
    said = tpu.held_elsewhere(f"Traceback (most recent call last):\n  ...\n{LOCKFILE}\n")
    assert said.startswith("the TPU is held by another program") and "\n" not in said
    assert tpu.held_elsewhere("The TPU is already in use by a process with pid 4242.")
    assert tpu.held_elsewhere("RuntimeError: Unable to initialize backend 'tpu': NOT_FOUND") == ""


def test_a_container_without_the_pci_bus_finds_the_chip_by_its_device_files(tmp_path):
    pci, dev = tmp_path / "pci", tmp_path / "dev"
    (dev / "vfio").mkdir(parents=True)
    (dev / "vfio" / "0").touch()
    (dev / "vfio" / "vfio").touch()  # the container device, no chip
    assert tpu.absence_reason(pci, dev, {}) is not None, "a passed-through device of another kind"
    assert tpu.absence_reason(pci, dev, {"TPU_ACCELERATOR_TYPE": "v5litepod-4"}) is None
    assert tpu.device_files(dev, {"TPU_ACCELERATOR_TYPE": "v5litepod-4"}) == [f"{dev}/vfio/0"]
    (dev / "accel0").touch()  # TPU v4's driver
    assert tpu.absence_reason(pci, dev, {}) is None
