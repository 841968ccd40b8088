raise ImportError("tests/data/sglang-0.5.24 is a synthetic SGLang-shaped tree: read it with ast, never import it")
