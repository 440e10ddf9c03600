"""The `autotune` MLIR dialect and the few IREE ops the project reads or creates, as xDSL
definitions (`autotune`, `flow`, `hal`, `util`, `verbatim`) with their syntax.

The package exports nothing itself: reading, verifying and printing modules is the IREE
bridge's, `autotune_bridge` (`parse_module`, `print_module`, `GroupOp`, ...), which stands
on these definitions.
"""
