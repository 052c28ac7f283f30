"""Reading docs/guide.md's marked code blocks, and running them the way a reader does: the
shell blocks one after another in one bash (the variables of one step reach the next), the
Python blocks as one script, the webhook receiver in the background."""

from __future__ import annotations

import queue
import re
import subprocess
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

GUIDE = Path(__file__).parents[2] / "docs" / "guide.md"
_MARKED = re.compile(r"<!-- guide: ([a-z0-9-]+) -->\n```(sh|python)\n(.*?)^```$", re.S | re.M)
_FENCED = re.compile(r"^```(sh|python)$", re.M)


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced block of the guide and the name its marker gives it."""

    name: str
    language: str
    code: str


def guide_blocks(text: str) -> list[Block]:
    """Every sh and python block in order; each must carry a `<!-- guide: NAME -->` marker,
    so that none is left out of the run."""
    blocks = [Block(*match.groups()) for match in _MARKED.finditer(text)]
    assert len(blocks) == len(_FENCED.findall(text)), "a code block of the guide has no marker"
    names = [block.name for block in blocks]
    assert len(set(names)) == len(names), f"two blocks share a name: {names}"
    return blocks


class Shell:
    """One bash the blocks are typed into, as into the reader's terminal."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.process = subprocess.Popen(
            ["bash", "--noprofile", "--norc"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd=cwd,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.run("set -e -o pipefail")

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put("")  # bash ended: a command failed under `set -e`

    def run(self, code: str, *, timeout: float = 60) -> str:
        """What `code` printed; fails when a command of it fails."""
        assert self.process.stdin is not None
        done = f"block-done-{uuid.uuid4().hex}"
        self.process.stdin.write(f"{code}\necho; echo {done}\n")
        self.process.stdin.flush()
        printed: list[str] = []
        while (line := self.lines.get(timeout=timeout)) != f"{done}\n":
            assert line, "the block failed:\n" + "".join(printed)
            printed.append(line)
        return "".join(printed).strip()

    def close(self) -> None:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)
        self.reader.join(timeout=10)
        self.process.stdout.close()


def python_script(blocks: list[Block]) -> str:
    """The Python blocks as the one script they form, a line naming each block before its
    output so that each block's output can be told apart."""
    return "\n".join(f"print({_heading(b.name)!r}, flush=True)\n{b.code}" for b in blocks)


def outputs_by_block(printed: str, blocks: list[Block]) -> dict[str, str]:
    """`python_script`'s output cut at the lines naming the blocks."""
    parts = re.split(r"^@@ block (\S+) @@$", printed, flags=re.M)[1:]
    found = {name: output.strip() for name, output in zip(parts[::2], parts[1::2], strict=True)}
    assert list(found) == [b.name for b in blocks], printed
    return found


def _heading(name: str) -> str:
    return f"@@ block {name} @@"
