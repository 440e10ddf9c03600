"""Read a compiled `.vmfb` back: its files (the VM module and its executables) and its CUDA
executable's exports (kernel name, block size, dynamic shared memory, push-constant count
and binding flags) and PTX images.

`iree-dump-module` prints a CUDA executable only as an opaque rodata blob (plus the kernel
names, as strings for `hal.executable.lookup.function`), so these are read from the
executable's own flatbuffer (file identifier "CDA1"). Shared by tests/test_cuda.py,
tests/test_triton_module.py and tests/test_triton_docs.py.
"""

from __future__ import annotations

import io
import struct
import zipfile
from dataclasses import dataclass


@dataclass(frozen=True)
class CudaExport:
    name: str
    block_dims: tuple[int, int, int]
    shared_memory: int
    constant_count: int
    binding_flags: tuple[int, ...]


def vmfb_files(vmfb: bytes) -> dict[str, bytes]:
    """The files of a `.vmfb`, by name, in order: IREE writes a zip archive (entries
    stored, not compressed, so that they can be mapped) whose first file, `module.fb`, is
    the VM module's flatbuffer and whose others are its executables, one per target format
    (`exe_cuda_nvptx_fb.fb`)."""
    with zipfile.ZipFile(io.BytesIO(vmfb)) as archive:
        stored = all(info.compress_type == zipfile.ZIP_STORED for info in archive.infolist())
        assert stored, "a compressed entry in the module's archive"
        return {info.filename: archive.read(info) for info in archive.infolist()}


def flatbuffer_identifier(data: bytes) -> bytes:
    """The file identifier of a size-prefixed flatbuffer (`module.fb`): a four-byte size,
    the root table's offset, then the four-byte identifier (b"IREE" for a VM bytecode
    module)."""
    return data[8:12]


def _cuda_executable(vmfb: bytes) -> tuple[bytes, int]:
    """The CUDA executable flatbuffer inside a vmfb: (buffer, root table offset).

    The executable is a rodata blob: a header starting "CDA1", then the flatbuffer, whose
    file identifier "CDA1" follows its 4-byte root offset."""
    at = vmfb.find(b"CDA1")
    while at >= 0:
        if at >= 4:
            root = struct.unpack_from("<I", vmfb, at - 4)[0]
            if 8 <= root < 256:
                return vmfb[at - 4 :], root
        at = vmfb.find(b"CDA1", at + 1)
    raise AssertionError("no CUDA executable flatbuffer (identifier CDA1) in the module")


def cuda_exports(vmfb: bytes) -> tuple[list[CudaExport], list[str]]:
    """(exports, PTX images) of the module's CUDA executable.

    Read with IREE 3.13's `iree.hal.cuda.ExecutableDef` layout (measured on this build):
    ExecutableDef {0: exports [ExportDef], 1: modules [ModuleDef {0: ptx_image string}]};
    ExportDef {1: kernel_name string, 2: block_dims struct {x, y, z: uint32},
    3: block_shared_memory_size uint32, 4: constant_count uint32, 5: binding_flags [uint64]}.
    """
    buf, root = _cuda_executable(vmfb)

    def u32(at: int) -> int:
        return struct.unpack_from("<I", buf, at)[0]

    def fields(table: int) -> list[int | None]:
        vtable = table - struct.unpack_from("<i", buf, table)[0]
        size = struct.unpack_from("<H", buf, vtable)[0]
        offsets = struct.unpack_from(f"<{(size - 4) // 2}H", buf, vtable + 4)
        return [table + o if o else None for o in offsets]

    def deref(at: int) -> int:
        return at + u32(at)

    def vector(at: int) -> list[int]:
        start = deref(at)
        return [start + 4 + 4 * i for i in range(u32(start))]

    def string(at: int) -> str:
        start = deref(at)
        return buf[start + 4 : start + 4 + u32(start)].decode()

    top = fields(root)
    exports = []
    for slot in vector(top[0]):
        f = fields(deref(slot))
        flags_at = deref(f[5])
        exports.append(
            CudaExport(
                name=string(f[1]),
                block_dims=struct.unpack_from("<3I", buf, f[2]),
                shared_memory=u32(f[3]) if len(f) > 3 and f[3] is not None else 0,
                constant_count=u32(f[4]) if len(f) > 4 and f[4] is not None else 0,
                binding_flags=struct.unpack_from(f"<{u32(flags_at)}Q", buf, flags_at + 4),
            )
        )
    ptx = [string(fields(deref(slot))[0]) for slot in vector(top[1])]
    return exports, ptx
