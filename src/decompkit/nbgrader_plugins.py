"""nbgrader preprocessors the course configuration adds to autograding (nbgrader_config.py).

``CapOutputBytes`` bounds what a cell may store in the autograded notebook: nbgrader's own
``LimitOutput`` counts lines, so a single 50 MB line would be kept whole.
"""

from __future__ import annotations

import json

from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer

__all__ = ["CapOutputBytes"]


class CapOutputBytes(NbGraderPreprocessor):
    """Keep at most ``max_bytes`` of output per cell; say what was cut."""

    max_bytes = Integer(100_000, help="bytes of output kept per code cell").tag(config=True)

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type != "code" or not cell.get("outputs"):
            return cell, resources
        budget, kept, cut = self.max_bytes, [], 0
        for output in cell.outputs:
            size = len(json.dumps(output))
            if size <= budget:
                kept.append(output)
                budget -= size
            elif output.output_type == "stream" and budget > 0:
                head = output.text[: budget // 2]  # JSON escaping can double a character
                cut += len(output.text) - len(head)
                kept.append(new_output("stream", name=output.name, text=head))
                budget = 0
            else:
                cut += size
                budget = 0
        if cut:
            note = f"\n[output cut by the grader: {cut:,} more bytes not stored]\n"
            kept.append(new_output("stream", name="stdout", text=note))
        cell.outputs = kept
        return cell, resources
