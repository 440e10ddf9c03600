"""The one place the project uses xDSL's private parser API (xDSL 0.74), so that an xDSL
update that changes it breaks here and nowhere else.

Every other piece of the project's syntax reads and writes through xDSL's public parser
and printer methods (`parse_optional_*`, `pos`, `lexer.input`, `print_string`). One thing
has no public form: moving a parser past text it did not read token by token. A
`verbatim.op` keeps a kernel module as IREE printed it; its end is found by scanning the
text (`rawtext.find_region_op_end`), since the text is IREE's syntax, which xDSL's
grammar does not read (IREE-only ops, attributes and types). The parser then resumes after
it: `GenericParser._resume_from(position)` sets the lexer there and reads the next token,
which xDSL's public API does only as part of parsing something.
"""

from __future__ import annotations

from xdsl.parser import Parser
from xdsl.utils.lexer import Position


def resume_after(parser: Parser, position: Position) -> None:
    """Let `parser` go on from `position` of its input, the text before it taken as read."""
    parser._resume_from(position)
