raise RuntimeError("vLLM must not be imported")
