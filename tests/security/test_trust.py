"""Workspace trust: a repository's files never send code off the machine nor choose a model to
load; the user's own settings (editor settings, the user config file, the environment) do, or
the repository's after the user trusts it.  Endpoint answers are size-capped and timed out, a
remote completion carries no invented confidence, and a model's declared size is checked
before anything is allocated (issue 41, "a repository's luaguard.toml sends your code to its
URL")."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from endpoint_standin import completion_endpoint, completion_reply
from hostile import make_repo

from luaguard.config import CompletionSettings
from luaguard.completion.requests import CompletionRequest


@pytest.fixture(autouse=True)
def private_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own (empty) user config dir and no completion variables."""
    cfg = tmp_path / "user-config"
    cfg.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(cfg))
    for name in ("LUAGUARD_COMPLETION_ENDPOINT", "LUAGUARD_COMPLETION_MODEL", "LUAGUARD_USER_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    return cfg


HOSTILE_TOML = ('[completion]\nendpoint = "http://attacker.invalid:8000/v1"\nendpoint_model = "m"\n'
                'model = "models/huge"\n')


def test_a_repository_cannot_set_an_endpoint_or_a_model(tmp_path: Path) -> None:
    from luaguard.workspace import read_project_settings

    ws, _ = make_repo(tmp_path)
    (ws / "luaguard.toml").write_text('extra_globals = ["Knit"]\n' + HOSTILE_TOML)
    got = read_project_settings(ws)
    assert got.settings.completion.endpoint is None and got.settings.completion.model is None
    assert got.settings.extra_globals == ("Knit",)  # the repository's other settings still count
    assert len(got.notices) == 1, got.notices
    notice = got.notices[0]
    for word in ("completion.endpoint", "completion.model", "ignored", "trusted_projects"):
        assert word in notice, notice


def test_the_users_own_settings_and_an_explicit_opt_in_are_honoured(tmp_path: Path, private_user_config: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from luaguard.workspace import read_project_settings

    ws, _ = make_repo(tmp_path)
    (ws / "luaguard.toml").write_text(HOSTILE_TOML)
    user = private_user_config / "luaguard" / "config.toml"
    user.parent.mkdir()
    user.write_text('[completion]\nendpoint = "http://my-gpu:8000/v1"\n')
    got = read_project_settings(ws)
    assert got.settings.completion.endpoint == "http://my-gpu:8000/v1" and got.settings.completion.model is None
    monkeypatch.setenv("LUAGUARD_COMPLETION_ENDPOINT", "http://from-env:8000/v1")
    assert read_project_settings(ws).settings.completion.endpoint == "http://from-env:8000/v1"
    monkeypatch.delenv("LUAGUARD_COMPLETION_ENDPOINT")
    user.write_text(f"trusted_projects = [{json.dumps(str(ws))}]\n")
    got = read_project_settings(ws)
    assert got.settings.completion.endpoint == "http://attacker.invalid:8000/v1" and got.notices == []
    assert got.settings.completion.model == "models/huge"


def test_the_language_server_never_posts_to_a_repositorys_endpoint(tmp_path: Path) -> None:
    from raw_lsp import RawLspClient

    ws, _ = make_repo(tmp_path)
    with completion_endpoint(completion_reply("Shared", [-0.05])) as endpoint:
        (ws / "luaguard.toml").write_text(f'[completion]\nendpoint = "{endpoint.url}"\nendpoint_model = "m"\n'
                                          'endpoint_project = "place"\n')
        with RawLspClient(ws, tmp_path / "server.log") as client:
            client.initialize(ws)
            uri = (ws / "src" / "server" / "Main.server.luau").as_uri()
            text = "local x = game.ReplicatedStorage.\n"
            client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "luau", "version": 1,
                                                                    "text": text}})
            client.call("textDocument/completion", {"textDocument": {"uri": uri},
                                                    "position": {"line": 0, "character": len(text) - 1}}, 120)
            shown = [n.message["params"]["message"] for n in client.notifications
                     if n.message.get("method") == "window/showMessage"]
            client.shutdown()
        assert endpoint.seen == [], "the repository's endpoint received the code"
    assert any("completion.endpoint" in m and "ignored" in m for m in shown), shown


# -- the endpoint client -----------------------------------------------------------------------------
def _engine(url: str, **kw):
    from luaguard.completion.client import RemoteCompletionEngine

    return RemoteCompletionEngine(CompletionSettings(endpoint=url, endpoint_model="m", **kw), None)


def test_an_endpoint_answer_over_the_size_cap_is_refused() -> None:
    from luaguard.completion.client import EndpointError

    with completion_endpoint(completion_reply("x" * (8 * 1024 * 1024), [-0.1])) as endpoint:
        with pytest.raises(EndpointError, match="larger than"):
            _engine(endpoint.url).complete(CompletionRequest(text="local x = ", offset=10))


def test_the_models_answer_cannot_make_luaguard_send_the_whole_file() -> None:
    with completion_endpoint(completion_reply("1", [-0.1])) as endpoint:
        endpoint.models = {"data": [{"id": "m", "max_model_len": 10_000_000}]}
        text = "local a = 1\n" * 200_000  # 2.4M characters
        _engine(endpoint.url).complete(CompletionRequest(text=text, offset=len(text)))
        assert len(endpoint.bodies[0]["prompt"]) <= 100_000


def test_a_huge_models_answer_is_not_read_whole() -> None:
    with completion_endpoint(completion_reply("1", [-0.1])) as endpoint:
        endpoint.models = {"data": [{"id": "m", "max_model_len": 4096}], "padding": "x" * (8 * 1024 * 1024)}
        assert _engine(endpoint.url).context_length() is None


def test_a_completion_without_log_probabilities_invents_no_confidence() -> None:
    with completion_endpoint(completion_reply("Shared")) as endpoint:
        got = _engine(endpoint.url).complete(CompletionRequest(text="x = game.", offset=9))
    assert got.mean_prob is None and got.min_prob is None
    assert got.withheld and got.text == ""  # a confidence floor that cannot be checked is not met
    with completion_endpoint(completion_reply("Shared")) as endpoint:
        got = _engine(endpoint.url, min_confidence=0.0).complete(CompletionRequest(text="x = game.", offset=9))
    assert got.text == "Shared" and got.mean_prob is None and not got.guarded


@pytest.fixture
def dripping_server():
    """An endpoint that sends its answer one byte every 0.1 s (100 s for the whole body)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            body = json.dumps({"choices": [{"text": "x" * 960}]}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                for b in body:
                    self.wfile.write(bytes([b]))
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:
                pass

        def do_GET(self):  # noqa: N802
            self.send_response(404)
            self.end_headers()

        def log_message(self, *a):
            pass

    srv = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_port}/v1"
    srv.shutdown()
    srv.server_close()


def test_a_dripping_endpoint_is_timed_out_as_a_whole(dripping_server: str) -> None:
    from luaguard.completion.client import EndpointError

    t0 = time.monotonic()
    with pytest.raises(EndpointError):
        _engine(dripping_server, timeout_ms=1000).complete(CompletionRequest(text="local x = ", offset=10))
    assert time.monotonic() - t0 < 50  # the answer takes 100 s; a per-read timeout would wait for all of it


# -- models -------------------------------------------------------------------------------------
def test_a_models_declared_size_is_checked_before_allocation(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from luaguard.completion.loading import default_model_path

    folder = tmp_path / "model"
    shutil.copytree(default_model_path(), folder)
    config = json.loads((folder / "config.json").read_text())
    config.update(vocab_size=4_000_000, hidden_size=4096, intermediate_size=16384, num_hidden_layers=80)
    (folder / "config.json").write_text(json.dumps(config))
    script = ("import resource, sys\n"
              "resource.setrlimit(resource.RLIMIT_AS, (6 * 1024**3, 6 * 1024**3))\n"
              "from luaguard.completion.loading import ModelLoadError, load_model\n"
              "try:\n    load_model(sys.argv[1], device='cpu')\nexcept ModelLoadError as exc:\n    print(exc)\n")
    proc = subprocess.run([sys.executable, "-P", "-c", script, str(folder)], capture_output=True, text=True, timeout=300)
    assert "declares" in proc.stdout and "parameters" in proc.stdout, (proc.stdout, proc.stderr[-2000:])
