"""The language server's snapshot after an edit: only the edited file is searched again,
and every answer is the one a search of every file gives."""

from __future__ import annotations

from pathlib import Path

from luaguard.analysis.scans import ProjectScans

FILES = {
    Path("/p/a.luau"): 'local remotes = game.ReplicatedStorage:WaitForChild("Remotes")\nremotes.Hit:FireServer()\n',
    Path("/p/b.luau"): 'local r = RS.Remotes\nprint(Remotes["Hit"], Remotes.Jump)\n',
    Path("/p/c.luau"): "return Remotes.Dash\n",
}


def scans_of(texts: dict[Path, str], buffers: dict[Path, str] | None = None) -> ProjectScans:
    scans = ProjectScans(lambda: list(texts), lambda p: texts.get(p))
    for path, text in (buffers or {}).items():
        scans.set_text(path, text)
    return scans


def answers(scans: ProjectScans) -> list:
    reads = scans.reads
    return [list(reads.under(n).items()) for n in ("Hit", "Jump", "Dash", "Kick")] + \
        [list(reads.children(p).items()) for p in ("remotes", "replicatedstorage")]


def test_an_edited_buffer_gives_the_answers_of_a_fresh_search():
    scans = scans_of(FILES)
    answers(scans)  # (every answer computed once, before the edits)
    edits = [
        (Path("/p/b.luau"), 'print(Remotes.Kick)\n'),
        (Path("/p/a.luau"), 'local remotes = game.ReplicatedStorage.Remotes\nremotes.Kick:Fire()\nremotes.Hit:Fire()\n'),
        (Path("/p/b.luau"), None),  # closed: the disk text counts again
        (Path("/p/d.luau"), "Remotes.Hit.OnClientEvent:Connect(print)\n"),  # a new buffer, at the end of the order
    ]
    buffers: dict[Path, str] = {}
    for path, text in edits:
        scans.set_text(path, text)
        if text is None:
            buffers.pop(path, None)
        else:
            buffers[path] = text
        assert answers(scans) == answers(scans_of(FILES, buffers))
    assert dict(scans.reads.under("Kick"))["remotes"] == {Path("/p/a.luau")}
    assert set(dict(scans.reads.under("Hit"))["remotes"]) == {Path("/p/a.luau"), Path("/p/b.luau"), Path("/p/d.luau")}


def test_only_the_edited_file_is_searched_again():
    scans = scans_of(FILES)
    answers(scans)
    searched: list[Path] = []
    original = {k: v[0] for k, v in scans.reads._parts.items()}

    def spy(fn):
        def wrapped(path, text):
            searched.append(path)
            return fn(path, text)
        return wrapped

    scans.reads._parts = {k: (spy(fn), v[1]) for (k, v), fn in zip(scans.reads._parts.items(), original.values())}
    scans.set_text(Path("/p/c.luau"), "return Remotes.Dash, Remotes.Hit\n")
    got = answers(scans)
    assert set(searched) == {Path("/p/c.luau")}
    assert got == answers(scans_of(FILES, {Path("/p/c.luau"): "return Remotes.Dash, Remotes.Hit\n"}))


def test_the_run_time_world_after_edits_answers_as_a_fresh_one(tmp_path: Path):
    import shutil

    from luaguard.engine import Engine

    root = tmp_path / "place"
    shutil.copytree(Path(__file__).resolve().parent.parent / "samples" / "place", root)
    main = root / "src" / "server" / "Bootstrap.server.luau"
    disk = main.read_text()
    names = ("Arena", "Remotes", "Hit", "Workspace", "Folder", "Spawner")
    edits = [
        disk + '\nlocal f = Instance.new("Folder")\nf.Name = "Arena"\nf.Parent = workspace\n',
        disk + '\nlocal r = game.ReplicatedStorage.Remotes:Clone()\nr.Parent = workspace\n',
        disk + '\nlocal function spawn(name, parent)\n  local p = Instance.new("Part")\n  p.Name = name\n  p.Parent = parent\nend\nspawn("Spawner", workspace)\n',
        None,
    ]

    def facts(engine: Engine) -> list:
        world = engine.snapshot.world
        return [(sorted(world.mentioning(n)), sorted(world.naming_files(n))) for n in names]

    engine = Engine(root)
    facts(engine)  # (answers cached before the edits)
    seen = []
    for text in edits:
        engine.set_text(main, text)
        fresh = Engine(root)
        if text is not None:
            fresh.set_text(main, text)
        got = facts(engine)
        assert got == facts(fresh)
        seen.append(got)
    assert main in seen[0][0][1]  # (the edit that names "Arena" where it is created is found)
    assert main in seen[2][5][1]  # (and the helper's call site naming "Spawner")
    assert facts(engine)[0][1] == []  # the buffer closed: no file names "Arena" where it is created
