"""The top of the project: the `iree-autotune` command line (`main`), which gathers every
layer's subcommands, and the `xdsl-opt` plug-in (`universe`). Nothing imports this package."""
