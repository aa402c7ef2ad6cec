"""The Python examples of README.md and docs/guide/ run (as readme_blocks compiles the C ones). A block is fenced
```python and preceded by a line <!-- run: python --> (run by python_cpu) or <!-- run: python gpu --> (run by
python_gpu, on a Hopper GPU with PyTorch); a python block without such a line fails, so every example is run."""

import contextlib
import io
import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md"] + sorted((ROOT / "docs" / "guide").glob("*.md"))
BLOCK = re.compile(r"(?:<!-- run: (python(?: gpu)?) -->\n)?```python\n(.*?)```", re.S)


def python_blocks():
    blocks = []
    for document in DOCUMENTS:
        text = document.read_text()
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            blocks.append((f"{document.relative_to(ROOT)}:{line}", match.group(1), match.group(2)))
    return blocks


BLOCKS = python_blocks()


def test_the_guide_has_examples():
    kinds = [kind for _, kind, _ in BLOCKS]
    assert kinds.count("python") >= 4 and kinds.count("python gpu") >= 3, kinds


def run_example(code, where):
    """Run an example as the body of a module of its own, registered while it runs (torch.compile looks its functions'
    module up in sys.modules)."""
    module = types.ModuleType("libtma_example")
    sys.modules[module.__name__] = module
    try:
        exec(compile(code, where, "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]


def printed_false(text):
    """Whether an example's output has a line that is a comparison's False (a dict that holds False is not one)."""
    return any(line.strip() == "False" for line in text.splitlines())


@pytest.mark.parametrize("where,kind,code", [b for b in BLOCKS if b[1] != "python gpu"], ids=lambda v: str(v)[:40])
def test_cpu_example_runs(where, kind, code):
    assert kind == "python", f"{where}: a python block needs <!-- run: python --> or <!-- run: python gpu --> above it"
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        run_example(code, where)
    assert output.getvalue(), f"{where}: the example printed nothing"
    assert not printed_false(output.getvalue()), f"{where}: a comparison printed False:\n{output.getvalue()}"


@pytest.mark.gpu
@pytest.mark.parametrize("where,kind,code", [b for b in BLOCKS if b[1] == "python gpu"], ids=lambda v: str(v)[:40])
def test_gpu_example_runs(where, kind, code):
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        run_example(code, where)
    assert output.getvalue(), f"{where}: the example printed nothing"
    assert not printed_false(output.getvalue()), f"{where}: a comparison printed False:\n{output.getvalue()}"
