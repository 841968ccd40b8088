"""``python -m logscan``: the same as the ``logscan`` command."""
from logscan.entry import main

if __name__ == "__main__":
    main()
