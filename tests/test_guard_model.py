"""Tests for model loading (luaguard.completion.loading) against the shipped default model."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from luaguard.completion.loading import (
    LoadedModel,
    ModelLoadError,
    clear_model_cache,
    default_model_path,
    load_model,
)

pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline mode on, and any socket connection attempt fails the test."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")

    def refuse(self: socket.socket, *args: object, **kwargs: object) -> None:
        raise AssertionError(f"network access attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)


def _copy_model(tmp_path: Path, skip: tuple[str, ...] = ()) -> Path:
    dst = tmp_path / "model"
    dst.mkdir()
    for f in default_model_path().iterdir():
        if f.is_file() and f.name not in skip:
            shutil.copy(f, dst / f.name)
    return dst


def test_shipped_folder_has_the_files() -> None:
    path = default_model_path()
    for name in (
        "config.json",
        "generation_config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
        "README.md",
    ):
        assert (path / name).is_file(), name
    assert (path / "model.safetensors").stat().st_size <= 10 * 1024 * 1024
    assert not [p for p in path.iterdir() if p.suffix in (".bin", ".pt", ".pth")]


def test_default_model_loads_offline_and_generates(no_network: None) -> None:
    import torch

    loaded = load_model()
    assert isinstance(loaded, LoadedModel)
    assert loaded.path == default_model_path().resolve()
    assert loaded.device == ("cuda" if torch.cuda.is_available() else "cpu")
    assert loaded.context_length >= 512
    assert not loaded.model.training
    if loaded.device == "cpu":
        assert next(loaded.model.parameters()).dtype == torch.float32
    tok = loaded.tokenizer
    assert tok.eos_token == "<|endoftext|>"
    for special in ("<fim_prefix>", "<fim_middle>", "<fim_suffix>"):
        assert tok.convert_tokens_to_ids(special) != tok.unk_token_id
    prompt = 'local ReplicatedStorage = game:GetService("ReplicatedStorage")\nlocal '
    enc = tok(prompt, return_tensors="pt").to(loaded.device)
    assert tok.decode(enc.input_ids[0]) == prompt  # byte-level BPE round trip
    with torch.no_grad():
        out = loaded.model.generate(**enc, max_new_tokens=8, do_sample=False, pad_token_id=tok.eos_token_id)
    new = out[0, enc.input_ids.shape[1] :]
    assert 1 <= new.numel() <= 8
    assert isinstance(tok.decode(new), str)
    # cached per (path, device)
    assert load_model(None, device=loaded.device) is loaded
    assert load_model(str(default_model_path()), device=loaded.device) is loaded


def test_trained_model_beats_chance_on_luau() -> None:
    """The shipped weights are trained: Luau idioms cost far less than a uniform guess."""
    import math

    import torch

    loaded = load_model(device="cpu")
    text = (
        'local ReplicatedStorage = game:GetService("ReplicatedStorage")\n'
        'local Players = game:GetService("Players")\n\n'
        "Players.PlayerAdded:Connect(function(player)\n"
        "\tprint(player.Name)\n"
        "end)\n"
    )
    ids = loaded.tokenizer(text, return_tensors="pt").input_ids
    with torch.no_grad():
        loss = loaded.model(input_ids=ids, labels=ids).loss.item()
    assert loss < 0.5 * math.log(loaded.tokenizer.vocab_size)


def test_missing_folder(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(ModelLoadError, match="no such model folder") as err:
        load_model(str(missing))
    assert str(missing) in str(err.value) and "luaguard model pull" in str(err.value)
    with pytest.raises(ModelLoadError, match="no such model folder"):
        load_model(missing)  # a PathLike is never taken for a hub id


def test_file_instead_of_folder() -> None:
    with pytest.raises(ModelLoadError, match="not a folder"):
        load_model(str(default_model_path() / "config.json"))


def test_corrupt_safetensors(tmp_path: Path) -> None:
    model_dir = _copy_model(tmp_path)
    (model_dir / "model.safetensors").write_bytes(b"\x13\x37garbage" * 1000)
    with pytest.raises(ModelLoadError, match="cannot load the weights") as err:
        load_model(str(model_dir), device="cpu")
    assert str(model_dir) in str(err.value)


def test_truncated_safetensors(tmp_path: Path) -> None:
    model_dir = _copy_model(tmp_path)
    data = (default_model_path() / "model.safetensors").read_bytes()
    (model_dir / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelLoadError, match="cannot load the weights"):
        load_model(str(model_dir), device="cpu")


def test_safetensors_with_wrong_tensors(tmp_path: Path) -> None:
    """Weights that do not match the architecture must not load as random initialisation."""
    import torch
    from safetensors.torch import save_file

    model_dir = _copy_model(tmp_path)
    save_file({"something.else": torch.zeros(3)}, str(model_dir / "model.safetensors"))
    with pytest.raises(ModelLoadError, match="cannot load the weights|missing"):
        load_model(str(model_dir), device="cpu")


class _Boom:
    """Unpickling this creates a marker folder: proof that a pickle was executed."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.mkdir, (self.marker,))


def test_pickle_only_checkpoint_refused_and_never_unpickled(tmp_path: Path) -> None:
    model_dir = _copy_model(tmp_path, skip=("model.safetensors",))
    marker = tmp_path / "pickle-was-loaded"
    (model_dir / "pytorch_model.bin").write_bytes(pickle.dumps(_Boom(str(marker))))
    (model_dir / "extra.pt").write_bytes(pickle.dumps(_Boom(str(marker))))
    with pytest.raises(ModelLoadError, match="only safetensors") as err:
        load_model(str(model_dir), device="cpu")
    assert "pytorch_model.bin" in str(err.value)
    assert not marker.exists()


def test_no_weights_at_all(tmp_path: Path) -> None:
    model_dir = _copy_model(tmp_path, skip=("model.safetensors",))
    with pytest.raises(ModelLoadError, match="no model.safetensors"):
        load_model(str(model_dir), device="cpu")


def test_remote_code_config_refused(tmp_path: Path) -> None:
    model_dir = _copy_model(tmp_path)
    config = json.loads((model_dir / "config.json").read_text())
    config["auto_map"] = {"AutoModelForCausalLM": "modeling_evil.EvilModel"}
    (model_dir / "config.json").write_text(json.dumps(config))
    marker = tmp_path / "remote-code-ran"
    (model_dir / "modeling_evil.py").write_text(f"import os\nos.mkdir({str(marker)!r})\n")
    with pytest.raises(ModelLoadError, match="remote code") as err:
        load_model(str(model_dir), device="cpu")
    assert "trust_remote_code=False" in str(err.value)
    assert not marker.exists()


def test_bad_config(tmp_path: Path) -> None:
    model_dir = _copy_model(tmp_path)
    (model_dir / "config.json").write_text("{not json")
    with pytest.raises(ModelLoadError, match="invalid JSON"):
        load_model(str(model_dir), device="cpu")
    (model_dir / "config.json").unlink()
    with pytest.raises(ModelLoadError, match="no config.json"):
        load_model(str(model_dir), device="cpu")


def test_hub_id_not_in_cache(no_network: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub.constants as hc

    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(ModelLoadError, match="not downloaded") as err:
        load_model("luaguard-tests/not-a-cached-model")
    # the message names the command that fetches it
    assert "`luaguard model pull luaguard-tests/not-a-cached-model`" in str(err.value)
    with pytest.raises(ModelLoadError, match="`luaguard model pull luaguard-tests/not-a-cached-model@v2`"):
        load_model("luaguard-tests/not-a-cached-model@v2")


def test_hub_id_from_local_cache(no_network: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hub id whose snapshot is in the cache loads from there, without the network."""
    import huggingface_hub.constants as hc

    cache = tmp_path / "hub"
    repo = cache / "models--luaguard-tests--tiny"
    commit = "0123456789abcdef0123456789abcdef01234567"
    snap = repo / "snapshots" / commit
    snap.mkdir(parents=True)
    for f in default_model_path().iterdir():
        if f.is_file():
            shutil.copy(f, snap / f.name)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(cache))
    loaded = load_model("luaguard-tests/tiny", device="cpu")
    assert loaded.path == snap.resolve()
    assert loaded.context_length >= 512


def test_bad_device() -> None:
    with pytest.raises(ModelLoadError, match="device"):
        load_model(device="not-a-device")
    import torch

    if not torch.cuda.is_available():
        with pytest.raises(ModelLoadError, match="CUDA is not available"):
            load_model(device="cuda")


def test_cache_clear() -> None:
    a = load_model(device="cpu")
    clear_model_cache()
    b = load_model(device="cpu")
    assert a is not b
    assert load_model(device="cpu") is b


def test_import_does_not_pull_torch() -> None:
    code = "import sys, luaguard.completion.loading, luaguard.completion.context; print('torch' in sys.modules, 'transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["False", "False"]
