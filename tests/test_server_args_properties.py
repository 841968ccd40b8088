"""Property tests of the server_args reader: a repr it did not write is read back exactly, any
text is read without an exception, and a cut dump never invents a value."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from logscan.analysis.server_args import parse_repr

_KEY = st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True)
_SCALAR = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False) \
    | st.text(max_size=30)
_VALUE = st.recursive(_SCALAR, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                      max_leaves=8)
_ARGS = st.dictionaries(_KEY, _VALUE, max_size=12)
_SETTINGS = settings(max_examples=150, deadline=None, derandomize=True)


@_SETTINGS
@given(_ARGS)
def test_dict_repr_round_trips(args):
    """0.5.23's dump is ``repr(dict)``: every value comes back equal."""
    p = parse_repr(repr(args))
    assert p.shape == "dict" and not p.truncated
    assert p.values == args


@_SETTINGS
@given(_ARGS)
def test_dataclass_repr_round_trips(args):
    """<= 0.5.16's dump is a dataclass repr ``ServerArgs(k=v, ...)``."""
    text = "ServerArgs(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")"
    p = parse_repr(text)
    assert p.shape == "dataclass" and not p.truncated
    assert p.values == args


@_SETTINGS
@given(_ARGS, st.integers(0, 400))
def test_cut_dump_keeps_only_complete_pairs(args, cut):
    text = repr(args)
    p = parse_repr(text[:cut])
    complete = [k for k in p.values if k in p.raw and p.raw[k] != ""]
    for k in complete:
        if p.truncated and k == list(p.values)[-1]:
            continue  # the last value of a cut dump is kept as text, marked by ``truncated``
        assert p.values[k] == args[k]


@_SETTINGS
@given(st.text(max_size=300))
def test_any_text_is_read_without_an_exception(text):
    p = parse_repr(text)
    assert isinstance(p.values, dict)
