"""logscan: tell which quantization kernel an LLM serving engine actually runs, from its logs."""

__version__ = "0.1.0"
