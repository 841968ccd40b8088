"""``logscan.lazydc.dataclass`` gives the class ``dataclasses.dataclass`` gives, processed on first
use (start-up, issue 18): construction, unpickling and copying each process it, a class no run
instantiates is never processed, and the processed class behaves as an eager one."""
from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys
from typing import Optional

import pytest

from logscan import lazydc
from logscan.lazydc import dataclass
from tests.conftest import FIXTURES, ROOT


@dataclass(frozen=True)
class Frozen:
    name: str
    rung: int = 1
    tags: tuple = ()


@dataclass
class Mutable:
    name: str
    items: list = dataclasses.field(default_factory=list)
    note: Optional[str] = None


@dataclass
class Child(Mutable):
    extra: int = 0


@dataclasses.dataclass(frozen=True)
class EagerFrozen:
    name: str
    rung: int = 1
    tags: tuple = ()


def test_a_class_is_processed_on_its_first_construction_and_then_is_a_dataclass():
    @dataclass(frozen=True)
    class Local:
        a: int
        b: str = "x"

    assert lazydc._PENDING in Local.__dict__ and not dataclasses.is_dataclass(Local)
    obj = Local(1)
    assert dataclasses.is_dataclass(Local) and lazydc._PENDING not in Local.__dict__
    assert [f.name for f in dataclasses.fields(Local)] == ["a", "b"]
    assert obj == Local(1, "x") and hash(obj) == hash(Local(1, "x")) and repr(obj).endswith(".Local(a=1, b='x')")
    with pytest.raises(dataclasses.FrozenInstanceError):
        obj.a = 2  # type: ignore[misc]
    assert dataclasses.replace(obj, b="y") == Local(1, "y")


def test_it_behaves_as_the_eager_dataclass():
    lazy, eager = Frozen("marlin", 3, ("a",)), EagerFrozen("marlin", 3, ("a",))
    assert repr(lazy).replace("Frozen", "X") == repr(eager).replace("EagerFrozen", "X")
    assert hash(lazy) == hash(eager)
    assert [f.name for f in dataclasses.fields(Frozen)] == [f.name for f in dataclasses.fields(EagerFrozen)]
    m = Mutable("x")
    m.items.append(1)
    assert Mutable("x").items == [] and m != Mutable("x") and Mutable.__hash__ is None
    with pytest.raises(TypeError):
        Mutable()  # type: ignore[call-arg]


def test_a_subclass_processes_its_base_first():
    c = Child("x", [1], None, 5)
    assert [f.name for f in dataclasses.fields(Child)] == ["name", "items", "note", "extra"]
    assert c == Child(name="x", items=[1], extra=5) and dataclasses.is_dataclass(Mutable)


def test_copying_gives_equal_objects():
    m = Mutable("x", [1, 2], "n")
    assert copy.copy(m) == m and copy.deepcopy(m) == m and copy.deepcopy(m).items is not m.items


#: in a fresh interpreter: unpickle before any construction, then check the object
UNPICKLE = """
import pickle, sys, dataclasses
from logscan import lazydc
import tests.test_lazydc as t
assert lazydc._PENDING in t.Frozen.__dict__ and lazydc._PENDING in t.Child.__dict__
a, b = pickle.loads(sys.stdin.buffer.read())
assert lazydc._PENDING not in t.Frozen.__dict__ and lazydc._PENDING not in t.Child.__dict__
assert a == t.Frozen("marlin", 3, ("a",)) and hash(a) == hash(t.Frozen("marlin", 3, ("a",)))
assert b == t.Child("x", [1], "n", 2) and b.items == [1]
try:
    a.rung = 4
except dataclasses.FrozenInstanceError:
    print("OK")
"""


def test_unpickling_before_any_construction_processes_the_class():
    blob = pickle.dumps((Frozen("marlin", 3, ("a",)), Child("x", [1], "n", 2)))
    r = subprocess.run([sys.executable, "-c", UNPICKLE], input=blob, capture_output=True, cwd=ROOT, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == b"OK", r.stderr.decode()


def test_a_class_with_its_own_init_or_slots_is_processed_at_once():
    @dataclass
    class Own:
        a: int = 0

        def __init__(self):
            self.a = 7

    @dataclass(slots=True)
    class Slotted:
        a: int = 0

    assert dataclasses.is_dataclass(Own) and Own().a == 7
    assert dataclasses.is_dataclass(Slotted) and "__slots__" in Slotted.__dict__


#: a scan, then which logscan classes are still unprocessed
PROBE = """
import sys
from logscan.cli import main
from logscan import lazydc
try:
    main()
except SystemExit:
    pass
print(sorted(c.__module__ + "." + c.__qualname__ for m in list(sys.modules.values())
             if getattr(m, "__name__", "").startswith("logscan")
             for c in vars(m).values() if isinstance(c, type) and lazydc._PENDING in c.__dict__), file=sys.stderr)
"""


def test_a_scan_leaves_the_classes_it_does_not_use_unprocessed():
    r = subprocess.run([sys.executable, "-c", PROBE, "scan", "--format", "json", str(FIXTURES / "vllm" / "vllm-022.log")],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    pending = eval(r.stderr.strip().splitlines()[-1])  # noqa: S307 - our own probe's list
    assert "logscan.analysis.gpus.Gpu" in pending and "logscan.analysis.server_args.ParsedArgs" in pending
    assert "logscan.analysis.runstate.RunState" not in pending  # every run builds one
