"""The README's terminal screenshot of ``luaguard check``: the coloured output as a real
terminal shows it, taken from tmux.

    python scripts/terminal_screenshot.py [--out docs/screenshots/terminal-check.png]

Runs ``luaguard check`` on five of the sample patches (from ``samples/``) in a detached tmux session (a real
pseudo-terminal: luaguard sees a terminal and colours its output by itself, nothing forces
it), reads the screen with ``tmux capture-pane -e`` (text + SGR colours; saved beside the PNG
as ``.ansi``), turns it into HTML with rich (``Text.from_ansi``, ``Console.export_html``) and
renders that to PNG with headless Chromium (``apt-get install tmux chromium``).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COLS, ROWS = 200, 46
PATCHES = ("combat_bad_path", "data_service_bad_service", "combat_service_remote_typo", "ability_rest_of_code",
           "weapons_eof_paren")
THEME_CSS = ("body{margin:0;background:#0d1117}pre{margin:0;padding:14px 18px;background:#0d1117;color:#e6edf3;"
             "font:14px/1.35 'DejaVu Sans Mono',monospace}")


def tmux(socket: str, *args: str) -> str:
    return subprocess.run(["tmux", "-L", socket, *args], check=True, capture_output=True, text=True).stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots" / "terminal-check.png")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = ap.parse_args(argv)
    for tool in ("tmux", args.chromium):
        if not shutil.which(tool):
            print(f"{tool} not found (apt-get install tmux chromium)", file=sys.stderr)
            return 2
    luaguard = Path(sys.executable).parent / "luaguard"
    command = f"luaguard check patches/{{{','.join(PATCHES)}}}.luau --project place --patch"
    socket = f"luaguard-shot-{os.getpid()}"
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env.update(TERM="xterm-256color", COLORTERM="truecolor", PATH=f"{luaguard.parent}{os.pathsep}{env['PATH']}")
    shell = f"cd {shlex.quote(str(REPO / 'samples'))} && PS1='samples$ ' bash --norc --noprofile"
    subprocess.run(["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-x", str(COLS), "-y", str(ROWS), shell],
                   check=True, env=env)
    try:
        tmux(socket, "send-keys", "clear", "Enter")
        time.sleep(0.5)
        tmux(socket, "send-keys", command, "Enter")
        for _ in range(100):  # until the closing line is on the screen
            time.sleep(0.2)
            if "Found " in tmux(socket, "capture-pane", "-p"):
                break
        time.sleep(0.3)
        screen = tmux(socket, "capture-pane", "-p", "-e", "-J")
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
    lines = screen.rstrip("\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    screen = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".ansi").write_text(screen, encoding="utf-8")

    from rich.console import Console
    from rich.terminal_theme import MONOKAI
    from rich.text import Text

    console = Console(record=True, width=COLS, file=open(os.devnull, "w"), force_terminal=True, color_system="truecolor")
    console.print(Text.from_ansi(screen), soft_wrap=True)
    html = console.export_html(theme=MONOKAI, inline_styles=True,
                               code_format="<!doctype html><html><head><meta charset='utf-8'><style>"
                                           + THEME_CSS.replace("{", "{{").replace("}", "}}")
                                           + "</style></head><body><pre>{code}</pre></body></html>")
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "screen.html"
        page.write_text(html, encoding="utf-8")
        from rich.cells import cell_len

        width = 40 + int(8.5 * max(cell_len(Text.from_ansi(x).plain) for x in lines))
        height = 30 + 19 * len(lines)
        subprocess.run([args.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--window-size={width},{height}", f"--screenshot={args.out}", page.as_uri()],
                       check=True, capture_output=True, timeout=120)
    print(f"{args.out} ({len(lines)} lines) and {args.out.with_suffix('.ansi')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
