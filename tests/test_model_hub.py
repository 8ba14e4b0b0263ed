"""``luaguard model pull`` / ``luaguard model list`` against a local stand-in for the Hugging
Face Hub (tests/hub_standin.py; ``HF_ENDPOINT`` points at it), never the network.

The stand-in repository ``luaguard-tests/demo`` holds the shipped demonstration model's files
plus files a pull must not fetch (a pickle checkpoint, code, a README, ONNX weights).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hub_standin import HubStandIn
from luaguard.completion.loading import ModelLoadError, default_model_path

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = {"config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"}
NOT_FETCHED = {"pytorch_model.bin": b"\x80\x04pickle", "README.md": b"# demo\n", "modeling_demo.py": b"import os\n",
               "onnx/model.onnx": b"onnx", "training_args.bin": b"\x80\x04"}


def _demo_files() -> dict[str, bytes]:
    files = {p.name: p.read_bytes() for p in default_model_path().iterdir() if p.name in ALLOWED}
    assert set(files) == ALLOWED
    return files


def _env(hub: HubStandIn, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    env.update(HF_ENDPOINT=hub.url, HF_HOME=str(home), HF_HUB_CACHE=str(home / "hub"), HF_HUB_DISABLE_TELEMETRY="1",
               HF_HUB_DISABLE_IMPLICIT_TOKEN="1", PYTHONWARNINGS="default")
    return env


def _luaguard(args: list[str], env: dict[str, str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "luaguard", *args], capture_output=True, text=True, env=env,
                          timeout=180, cwd=ROOT, **kw)


@pytest.fixture
def local_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The stand-in, with huggingface_hub in this process pointed at it and at an empty cache."""
    import huggingface_hub.constants as hc

    with HubStandIn() as hub:
        # what HF_ENDPOINT sets when huggingface_hub is imported
        monkeypatch.setattr(hc, "ENDPOINT", hub.url)
        monkeypatch.setattr(hc, "HUGGINGFACE_CO_URL_TEMPLATE", hub.url + "/{repo_id}/resolve/{revision}/{filename}")
        monkeypatch.setattr(hc, "HF_HUB_CACHE", str(tmp_path / "hub"))
        monkeypatch.setattr(hc, "HF_HUB_DISABLE_IMPLICIT_TOKEN", True)
        yield hub


def test_model_pull_and_list_through_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with HubStandIn() as hub:
        commit = hub.add("luaguard-tests/demo", {**_demo_files(), **NOT_FETCHED})
        env = _env(hub, tmp_path)
        run = _luaguard(["model", "pull", "luaguard-tests/demo"], env)
        assert run.returncode == 0, run.stderr
        snapshot = tmp_path / "hub" / "models--luaguard-tests--demo" / "snapshots" / commit
        assert f"into {snapshot}" in run.stdout
        assert "--model luaguard-tests/demo" in run.stdout and '\n        model = "luaguard-tests/demo"' in run.stdout
        assert "luaguard: pulling luaguard-tests/demo at the default branch" in run.stderr
        assert "5 files" in run.stderr and "100%" in run.stderr  # what is fetched, and a progress bar
        assert "Warning" not in run.stderr
        # config, tokenizer and safetensors only: the rest was never asked for
        assert {p.name for p in snapshot.iterdir()} == ALLOWED
        for name in NOT_FETCHED:
            assert hub.fetched(name) == [], name
        for name in ALLOWED:
            assert (snapshot / name).read_bytes() == (default_model_path() / name).read_bytes()
        # list: the demonstration model first, then the pulled one, loadable, with its FIM family
        listed = _luaguard(["model", "list"], env)
        assert listed.returncode == 0, listed.stderr
        rows = listed.stdout.splitlines()
        assert rows[0].split() == ["NAME", "REVISION", "SIZE", "PARAMS", "FIM", "STATUS"]
        assert rows[1].split()[:2] == ["demonstration", "shipped"] and rows[1].endswith("demonstration only")
        pulled = next(r for r in rows if r.startswith("luaguard-tests/demo "))
        assert pulled.split()[1] == "main" and "1.8M" in pulled and "starcoder" in pulled and pulled.endswith("ok")
        # the same cache from this process (as HF_ENDPOINT and HF_HUB_CACHE set it)
        import huggingface_hub.constants as hc

        from luaguard.completion.loading import clear_model_cache, load_model
        from luaguard.completion.hub import list_models, pull

        monkeypatch.setattr(hc, "ENDPOINT", hub.url)
        monkeypatch.setattr(hc, "HUGGINGFACE_CO_URL_TEMPLATE", hub.url + "/{repo_id}/resolve/{revision}/{filename}")
        monkeypatch.setattr(hc, "HF_HUB_CACHE", str(tmp_path / "hub"))
        before = len(hub.fetched("model.safetensors"))
        assert pull("luaguard-tests/demo", progress=False).path == snapshot
        assert len(hub.fetched("model.safetensors")) == before  # a second pull fetches nothing again
        entry = next(e.to_json() for e in list_models() if e.name == "luaguard-tests/demo")
        assert entry["loadable"] and entry["parameters"] == 1_803_904 and entry["fimFamily"] == "starcoder"
        # the pulled model loads offline by its id
        lm = load_model("luaguard-tests/demo", device="cpu")
        assert lm.path == snapshot.resolve() and not lm.demonstration
        clear_model_cache()


def _weights(n: int, seed: int = 0) -> bytes:
    import numpy as np
    from safetensors.numpy import save

    return save({"w": np.arange(seed, seed + n, dtype=np.float32)})


def test_model_pull_resumes_a_dropped_connection(tmp_path: Path) -> None:
    """The connection drops in the middle of the weights: the pull asks for the rest (HTTP
    Range) and ends with the whole file."""
    weights = _weights(6_000_000)  # 24 MB
    files = {"config.json": (default_model_path() / "config.json").read_bytes(), "model.safetensors": weights}
    with HubStandIn() as hub:
        commit = hub.add("luaguard-tests/big", files)
        hub.cut("model.safetensors", after=len(weights) // 2)
        run = _luaguard(["model", "pull", "luaguard-tests/big", "--quiet"], _env(hub, tmp_path))
        assert run.returncode == 0, run.stderr
        ranges = hub.fetched("model.safetensors")
        assert len(ranges) == 2 and ranges[0] is None
        start = int(ranges[1].removeprefix("bytes=").removesuffix("-"))
        assert 0 < start <= len(weights) // 2
    snapshot = tmp_path / "hub" / "models--luaguard-tests--big" / "snapshots" / commit
    assert (snapshot / "model.safetensors").read_bytes() == weights


def test_model_pull_run_again_fetches_only_what_is_missing(tmp_path: Path) -> None:
    """A pull killed in the middle of the second weights file keeps the first; running the
    command again fetches the second only."""
    first_shard, second_shard = _weights(1_000_000), _weights(6_000_000, seed=7)
    files = {"config.json": (default_model_path() / "config.json").read_bytes(),
             "model-00001-of-00002.safetensors": first_shard, "model-00002-of-00002.safetensors": second_shard}
    with HubStandIn() as hub:
        commit = hub.add("luaguard-tests/sharded", files)
        env = _env(hub, tmp_path)
        snapshot = tmp_path / "hub" / "models--luaguard-tests--sharded" / "snapshots" / commit
        sent, release = hub.stall("model-00002-of-00002.safetensors", after=len(second_shard) // 2)
        first = subprocess.Popen([sys.executable, "-m", "luaguard", "model", "pull", "luaguard-tests/sharded"], env=env,
                                 cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            assert sent.wait(120), "the first pull never reached the second shard"
            deadline = time.monotonic() + 120
            while not (snapshot / "model-00001-of-00002.safetensors").is_file():
                assert time.monotonic() < deadline, "the first shard was never finished"
                time.sleep(0.05)
        finally:
            first.kill()
            first.wait(30)
            release.set()
        assert not (snapshot / "model-00002-of-00002.safetensors").exists()
        run = _luaguard(["model", "pull", "luaguard-tests/sharded", "--quiet"], env)
        assert run.returncode == 0, run.stderr
        assert len(hub.fetched("model-00001-of-00002.safetensors")) == 1  # kept from the first run
        assert len(hub.fetched("model-00002-of-00002.safetensors")) == 2
    assert (snapshot / "model-00001-of-00002.safetensors").read_bytes() == first_shard
    assert (snapshot / "model-00002-of-00002.safetensors").read_bytes() == second_shard


def test_model_pull_refuses_remote_code(local_hub: HubStandIn, tmp_path: Path) -> None:
    from luaguard.completion.hub import HubError, pull

    config = json.loads((default_model_path() / "config.json").read_text())
    config["auto_map"] = {"AutoModelForCausalLM": "modeling_demo.DemoForCausalLM"}
    local_hub.add("luaguard-tests/custom", {**_demo_files(), "config.json": json.dumps(config).encode(),
                                            "modeling_demo.py": b"import os\n"})
    with pytest.raises(HubError, match="needs custom remote code") as err:
        pull("luaguard-tests/custom", progress=False)
    assert "trust_remote_code=False" in str(err.value)
    assert local_hub.fetched("model.safetensors") == [] and local_hub.fetched("modeling_demo.py") == []
    # a tokenizer that needs code is refused the same way
    tconf = json.loads((default_model_path() / "tokenizer_config.json").read_text())
    tconf["auto_map"] = {"AutoTokenizer": ["tokenization_demo.DemoTokenizer", None]}
    local_hub.add("luaguard-tests/custom-tok", {**_demo_files(), "tokenizer_config.json": json.dumps(tconf).encode()})
    with pytest.raises(HubError, match="tokenizer_config.json: the model needs custom remote code"):
        pull("luaguard-tests/custom-tok", progress=False)
    assert local_hub.fetched("model.safetensors") == []


def test_model_pull_refuses_pickle_only_and_non_models(local_hub: HubStandIn) -> None:
    from luaguard.completion.hub import HubError, pull

    files = {k: v for k, v in _demo_files().items() if k != "model.safetensors"}
    local_hub.add("luaguard-tests/pickle", {**files, "pytorch_model.bin": b"\x80\x04pickle"})
    with pytest.raises(HubError, match=r"no \*\.safetensors weights, only pickle checkpoints \['pytorch_model.bin'\]"):
        pull("luaguard-tests/pickle", progress=False)
    assert local_hub.fetched("pytorch_model.bin") == []
    local_hub.add("luaguard-tests/noconfig", {"model.safetensors": _demo_files()["model.safetensors"]})
    with pytest.raises(HubError, match="no config.json"):
        pull("luaguard-tests/noconfig", progress=False)


def test_model_pull_names_what_is_wrong(local_hub: HubStandIn) -> None:
    from luaguard.completion.hub import HubError, pull

    local_hub.add("luaguard-tests/demo", _demo_files())
    with pytest.raises(HubError, match=f"luaguard-tests/nope: no such model on {local_hub.url}"):
        pull("luaguard-tests/nope", progress=False)
    with pytest.raises(HubError, match="no revision 'v9'"):
        pull("luaguard-tests/demo", "v9", progress=False)
    with pytest.raises(HubError, match="expected a Hugging Face model id OWNER/NAME"):
        pull("../etc", progress=False)
    with pytest.raises(HubError, match="two revisions"):
        pull("luaguard-tests/demo@v1", "v2", progress=False)


def test_model_pull_unreachable_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    import huggingface_hub.constants as hc

    from luaguard.completion.hub import HubError, pull

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(hc, "ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setattr(hc, "HUGGINGFACE_CO_URL_TEMPLATE", f"http://127.0.0.1:{port}" + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(HubError, match="cannot reach http://127.0.0.1:.*run the command again"):
        pull("luaguard-tests/demo", progress=False)


def test_model_pull_revision_then_load_by_name_at_revision(local_hub: HubStandIn, tmp_path: Path) -> None:
    from luaguard.completion.loading import clear_model_cache, load_model
    from luaguard.completion.hub import pull

    local_hub.add("luaguard-tests/demo", _demo_files())
    tagged = local_hub.add("luaguard-tests/demo", {**_demo_files(), "generation_config.json": b'{"eos_token_id": 0}'}, "v1")
    result = pull("luaguard-tests/demo", "v1", progress=False)
    assert result.commit == tagged and result.setting == "luaguard-tests/demo@v1"
    assert load_model("luaguard-tests/demo@v1", device="cpu").path == result.path.resolve()
    # only v1 was pulled: the default branch is not there, and the message says how to get it
    with pytest.raises(ModelLoadError, match="`luaguard model pull luaguard-tests/demo`"):
        load_model("luaguard-tests/demo", device="cpu")
    clear_model_cache()


def test_model_list_flags_what_cannot_load(local_hub: HubStandIn, tmp_path: Path) -> None:
    from luaguard.completion.hub import format_table, list_models, pull

    assert [e.name for e in list_models()] == ["demonstration"]  # an empty cache
    local_hub.add("luaguard-tests/demo", _demo_files())
    result = pull("luaguard-tests/demo", progress=False)
    (result.path / "model.safetensors").unlink()
    entries = {e.name: e for e in list_models()}
    assert entries["luaguard-tests/demo"].problems == ("no safetensors weights",)
    assert "cannot load: no safetensors weights" in format_table(list(entries.values()))


def test_complete_with_a_model_that_is_not_there_names_the_pull_command(tmp_path: Path) -> None:
    with HubStandIn() as hub:
        run = _luaguard(["complete", "samples/place/src/client/Main.client.luau:1:1", "--model",
                         "luaguard-tests/not-pulled"], _env(hub, tmp_path))
    assert run.returncode == 2
    assert "`luaguard model pull luaguard-tests/not-pulled`" in run.stderr
    assert hub.requests == []  # loading never downloads
