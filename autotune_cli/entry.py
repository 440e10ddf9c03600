"""The `iree-autotune` console script: an interrupt (Ctrl-C) while the program is still
loading ends it as one while it runs does, with one line and exit status 130, never with a
traceback of an import. (This module imports nothing before it is ready to catch one.)"""


def console_main() -> None:
    """Load the command line, then run it (`autotune_cli.main.console_main`)."""
    try:
        from autotune_cli.main import console_main as run  # seconds: xDSL, IREE, numpy

        run()
    except KeyboardInterrupt:
        import sys

        from autotune_contracts.errors import INTERRUPTED

        print("error: interrupted", file=sys.stderr)
        sys.exit(INTERRUPTED)
