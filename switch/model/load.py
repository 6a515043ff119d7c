"""`load_program`: what every backend, the P4Runtime server and the STF runner start from. It sits
above the schema, the model and the reference checks, so each of them stays below the others."""

from ina.switch.model.bmv2_schema import validate
from ina.switch.model.errors import PipelineError
from ina.switch.model.layout import Layout
from ina.switch.model.program import Program, build_layout, malformed_json, read_program
from ina.switch.model.references import check_references


def load_program(json: dict) -> tuple[Layout, Program]:
    """Validate a v1model BMv2 JSON document, lay out its slots, read its model and check every
    reference in it (references.py): what every backend starts from; raises PipelineError naming
    what is wrong, before any code is generated."""
    validate(json)
    with malformed_json():
        layout = build_layout(json)
        if "standard_metadata" not in layout.headers:
            raise PipelineError(
                "the program has no standard_metadata header (not a v1model program?)"
            )
        model = read_program(json, layout)
        check_references(model, layout)
        return layout, model
