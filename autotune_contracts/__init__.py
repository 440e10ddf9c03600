"""What every layer of the project shares, and nothing else: the host ABI between lowered
modules and the runtime (`interface`), the user-facing error (`errors`), output files
written whole (`files`), lazily imported package attributes (`lazy`) and the groups'
selection policies (`policy`). It imports no other package of the project, nor xDSL or
IREE."""
