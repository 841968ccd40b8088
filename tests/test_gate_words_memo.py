"""``gate_words`` is memoised per term objects (start-up, issue 18): the words must be those
computed afresh, for every gate of every shipped ladder, on the first call and on later ones."""
from __future__ import annotations

from logscan.analysis import words
from logscan.packs.loader import default_packs


def _fresh(terms, sep=", "):
    return sep.join(words.term_words(t) for t in words._strongest(list(terms))) or "always available"


def test_memoised_words_are_the_fresh_words_of_every_shipped_gate():
    gates = []
    for pack in default_packs().packs.values():
        for lf in pack.ladders.values():
            for reg in lf.registry:
                gates += [list(t) for t in reg.gates.values()]
            gates += [list(k.gates) for k in lf.kernel.values()]
    assert len(gates) > 100
    for terms in gates:
        for sep in (", ", " and "):
            want = _fresh(terms, sep)
            assert words.gate_words(terms, sep) == want
            assert words.gate_words(list(terms), sep) == want  # the memoised answer, same objects


def test_other_objects_get_their_own_words():
    from logscan.packs.model import GateTerm

    a = [GateTerm(kind="opaque", text="first gate")]
    b = [GateTerm(kind="opaque", text="second gate")]
    assert words.gate_words(a) != words.gate_words(b)
    assert words.gate_words([]) == "always available"
