"""`iree_tensor_ext` ops that appear outside kernels: workgroup count helpers used in the
`workgroups` region of `flow.executable.export`."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IndexType
from xdsl.ir import Dialect, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, result_def, var_operand_def
from xdsl.parser import Parser
from xdsl.printer import Printer

from autotune_dialect.iree_attrs import opaque_classes


class _WorkgroupCountOp(IRDLOperation):
    """`%x, %y, %z = NAME(%w0, ...)`: workgroup count derived from the workload."""

    workload = var_operand_def(IndexType)
    x = result_def(IndexType)
    y = result_def(IndexType)
    z = result_def(IndexType)

    def __init__(self, workload: Sequence[SSAValue]):
        super().__init__(operands=[workload], result_types=[IndexType()] * 3)

    @classmethod
    def parse(cls, parser: Parser):
        pos = parser.pos
        args = parser.parse_op_args_list()
        return cls(parser.resolve_operands(args, [IndexType()] * len(args), pos))

    def print(self, printer: Printer) -> None:
        printer.print_string("(")
        printer.print_list(self.workload, printer.print_operand)
        printer.print_string(")")


@irdl_op_definition
class WorkgroupCountFromSliceOp(_WorkgroupCountOp):
    """Workgroup count computed by codegen from the workload slice of the dispatch."""

    name = "iree_tensor_ext.dispatch.workgroup_count_from_slice"


@irdl_op_definition
class WorkgroupCountFromDagRootOp(_WorkgroupCountOp):
    """Workgroup count computed by codegen from the root op of the dispatch."""

    name = "iree_tensor_ext.dispatch.workgroup_count_from_dag_root"


TensorExt = Dialect(
    "iree_tensor_ext",
    [WorkgroupCountFromSliceOp, WorkgroupCountFromDagRootOp],
    opaque_classes("iree_tensor_ext"),
)
