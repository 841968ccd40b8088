raise RuntimeError("tests read this tree with ast; it must never be imported")
