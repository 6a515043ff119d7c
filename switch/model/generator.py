"""What a primitive's emitter (primitives.py) may use of the code generator calling it.

Both generators (python/codegen.py `CodeGenerator`, native/codegen.py `CGenerator`) meet
`Generator`; each meets its engine's refinement too (`PythonGenerator`, `NativeGenerator`), which
lists what that engine's emitters call. The emitters are typed against these protocols, not the
generators' classes, so the shared table of primitives sits below both backends and imports
neither (tests/compiler/test_structure.py keeps it so).
"""

from typing import Protocol

from ina.switch.model.layout import HeaderLayout, Layout, StackLayout
from ina.switch.model.program import Program


class Generator(Protocol):
    """Either generator: the program it generates code for and the program's slot layout."""

    program: Program
    layout: Layout

    def copy_header(self, dst: dict, src: dict) -> list[str]: ...

    def copy_stack(self, dst: str, src: str) -> list[str]: ...


class PythonExpressions(Protocol):
    """python/expressions.py `ExpressionCompiler`: JSON expressions as Python source."""

    def value(self, obj: dict) -> str: ...

    def store(self, target: dict, source: str, source_obj: dict | None = None) -> str: ...

    def field_ref(self, obj: dict) -> tuple[str, int, bool]: ...

    def truncate(
        self, source: str, width: int, signed: bool, source_obj: dict | None = None
    ) -> str: ...

    def header_base(self, obj: dict) -> str: ...

    def header_width_fields(self, obj: dict) -> HeaderLayout: ...


class PythonGenerator(Generator, Protocol):
    """What the Python emitters call: python/codegen.py `CodeGenerator`."""

    expr: PythonExpressions
    drop_port: int
    trace: bool

    def copy_union(self, dst: str, src: str) -> list[str]: ...

    def stack_args(self, name: str) -> str: ...

    def sm_slot(self, name: str) -> int: ...

    def extern(self, kind: str, name: str) -> str: ...

    def calculation(self, name: str) -> str: ...


class NativeExpressions(Protocol):
    """native/expressions.py `CExpressions`: JSON expressions as C over 128-bit integers."""

    def value(self, obj: dict) -> str: ...

    def wrapped(self, obj: dict) -> str: ...

    def store(self, target: dict, source: dict) -> str: ...

    def store_c(self, target: dict, source: str) -> str: ...

    def field(self, obj: dict) -> tuple[str, int, bool]: ...

    def truncate(self, source: str, width: int, signed: bool) -> str: ...

    def header_base(self, obj: dict) -> tuple[str, HeaderLayout]: ...

    def stack(self, name: str) -> StackLayout: ...


class NativeGenerator(Generator, Protocol):
    """What the C emitters call: native/codegen.py `CGenerator`."""

    e: NativeExpressions
    sm: dict[str, int]  # standard_metadata's slots by field name
    wide_of: dict[str, list[tuple[int, int, int]]]  # header -> (slot, high word, low word)
    field_lists: dict[int, list[tuple[int, bool]]]
    learn_lists: dict[int, tuple[str, list[tuple[int, bool]]]]

    def index(self, kind: str, name: str) -> int: ...  # an extern instance's C index, by name

    def register_cell(self, index: int) -> str: ...  # a register's cell `i` (in range), in C

    def copy_union(self, dst: dict, src: dict) -> list[str]: ...

    def list_id(self, param: dict | None, known: dict, offset: int) -> str: ...

    def calculation(self, name: str, with_payload: bool) -> str: ...
