"""Attribute and type names of IREE 3.13's dialects, kept as raw text by the interop parser."""

IREE_ATTRIBUTE_NAMES: dict[str, tuple[str, ...]] = {
    "hal": ("device.target", "executable.object", "executable.objects", "executable.target", "pipeline.binding", "pipeline.layout"),
    "iree_codegen": ("compilation_info", "lowering_config", "translation_info"),
    "iree_cpu": ("lowering_config", "pipeline"),
    "iree_gpu": ("lowering_config",),
    "util": ("inline.never", "uninitialized"),
}
IREE_TYPE_NAMES: dict[str, tuple[str, ...]] = {
    "hal": ("buffer", "buffer_view", "device", "fence"),
    "iree_tensor_ext": ("dispatch.tensor",),
}
