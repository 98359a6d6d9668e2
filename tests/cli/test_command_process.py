"""What the `judge` command does to its own process, each checked in a fresh interpreter: it
leaves without tearing the interpreter down (exit code, exit handlers and output kept; a thread
still going gets the usual exit), tunes the garbage collector for itself only, and imports
httpx without its command-line client and numpy only when a result is summed up (issue 26)."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )


def test_the_command_exits_with_mains_code_after_the_exit_handlers_and_output() -> None:
    done = python(
        """
        import atexit, sys
        import judge.cli as cli
        atexit.register(lambda: print("exit handler ran"))
        def main():
            print("printed by the command", end="")  # no newline: still in the buffer
            sys.stderr.write("and on stderr")
            return 3
        cli.main = main
        cli.run()
        print("never here")
        """
    )
    assert done.returncode == 3
    assert done.stdout == "printed by the command" + "exit handler ran\n"
    assert done.stderr == "and on stderr"


def test_a_thread_still_running_gets_the_usual_exit_and_finishes() -> None:
    done = python(
        """
        import threading, time
        import judge.cli as cli
        def late():
            time.sleep(0.3)
            print("thread finished")
        def main():
            threading.Thread(target=late).start()
            return 5
        cli.main = main
        cli.run()
        """
    )
    assert done.returncode == 5
    assert done.stdout == "thread finished\n"


def test_the_garbage_collector_is_tuned_by_the_command_never_by_an_import() -> None:
    done = python(
        """
        import gc
        default = gc.get_threshold()
        import judge, judge.cli as cli
        assert gc.get_threshold() == default, "importing the library changed the collector"
        cli.main = lambda: print(gc.get_threshold() == cli.COMMAND_GC_THRESHOLDS) or 0
        cli.run()
        """
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "True\n", "")


def test_httpx_is_imported_without_its_command_line_client_which_stays_importable() -> None:
    done = python(
        """
        import sys, threading
        from judge.judges.clients.openai_client import import_httpx
        modules = []
        threads = [threading.Thread(target=lambda: modules.append(import_httpx())) for _ in range(4)]
        for t in threads: t.start()
        for t in threads: t.join()
        assert len(modules) == 4 and all(m.AsyncClient is modules[0].AsyncClient for m in modules)
        assert "httpx._main" not in sys.modules and "rich" not in sys.modules
        import httpx._main
        print(sys.modules["httpx._main"] is httpx._main)
        """
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "True\n"


def test_httpx_imported_first_by_someone_else_is_used_as_it_is() -> None:
    done = python(
        """
        import httpx
        from judge.judges.clients.openai_client import import_httpx
        assert import_httpx() is httpx
        """
    )
    assert (done.returncode, done.stderr) == (0, "")


def test_a_run_starts_without_numpy_or_the_html_report() -> None:
    done = python(
        """
        import sys
        import judge.cli.eval, judge.run.loop, judge.run.result, judge.report.display
        print(sorted({"numpy", "judge.report.html", "agreement"} & set(sys.modules)))
        from judge.report import render_html, write_html
        print(render_html.__module__, write_html.__module__)
        try:
            from judge.report import no_such_name
        except ImportError:
            print("ImportError")
        """
    )
    assert done.stderr == ""
    assert done.stdout.splitlines() == [
        "[]",
        "judge.report.html judge.report.html",
        "ImportError",
    ]


def test_a_profiled_command_still_writes_its_profile(tmp_path) -> None:
    profile = tmp_path / "judge.prof"
    done = subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "judge", "--version"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert profile.stat().st_size > 0
