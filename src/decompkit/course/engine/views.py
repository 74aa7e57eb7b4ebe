"""What the grader needs to know of each notebook's exercise: which item a graded cell asks
for, its label and the variables a student fills in, and the hint for a wrong answer.

:func:`exercise_side` is the one place the grading engine looks into the exercise modules
(:class:`decompkit.exercises.Exercise`); a notebook the exercises do not know gets a view that
knows nothing, so a course of other notebooks still grades.
"""

from __future__ import annotations

from ...exercises.params import EXERCISES, GRADER_VARIABLE, LECTURE, params

__all__ = ["GRADER_VARIABLE", "LECTURE", "ExerciseView", "exercise_side", "views"]


def exercise_side():
    """``({notebook file: exercise}, params)``: the exercise contract of each notebook
    (:class:`decompkit.exercises.Exercise`: ``name``, ``file``, ``grade_cells``, ``items``,
    ``diagnose``) and the function that draws a student's parameters."""
    return {exercise.file: exercise for exercise in EXERCISES.values()}, params


class ExerciseView:
    """What the record needs to know of one notebook's exercise (None: not an exercise)."""

    def __init__(self, exercise, params):
        self.exercise, self.params = exercise, params
        items = getattr(exercise, "items", ()) or ()
        self.by_cell = {getattr(item, "grade_cell", None): item for item in items}
        self.cells = dict(getattr(exercise, "grade_cells", {}) or {})

    def item(self, grade_id: str) -> dict:
        """``item``, ``label`` and ``names`` of the graded cell ``grade_id``."""
        found = self.by_cell.get(grade_id)
        if found is not None:
            return {"item": found.key, "label": found.label, "names": list(found.names)}
        return {"item": self.cells.get(grade_id, grade_id), "label": grade_id, "names": []}

    def refine(self, item: dict, student: str, answer) -> None:
        """Fill status, hint and mistake of a wrong answer from the exercise's diagnosis."""
        diagnose = getattr(self.exercise, "diagnose", None)
        if diagnose is None:
            return
        try:
            P = self.params(self.exercise.name, student)
            found = diagnose(item["item"], answer, P)
        except Exception:  # noqa: BLE001 - a hint is a courtesy; the score stands without it
            return
        if getattr(found, "status", "ok") != "ok":
            item["status"] = found.status
        item["message"] = getattr(found, "message", "") or ""
        item["mistake"] = getattr(found, "mistake", None)
        if getattr(found, "matches", None):
            item["matches"] = found.matches

    def blank_items(self, source, status: str) -> dict:
        """Every graded cell of ``source`` at 0 points with ``status`` (nothing ran)."""
        return {
            grade_id: {
                **self.item(grade_id),
                "score": 0.0,
                "max_score": points,
                "status": status,
                "answer": None,
                "message": "",
                "mistake": None,
                "matches": None,
            }
            for grade_id, points in source.points.items()
        }


def views(notebooks) -> dict:
    """An :class:`ExerciseView` for each notebook name (those the exercises do not know
    get a view that knows nothing)."""
    try:
        registry, params = exercise_side()
    except Exception:  # noqa: BLE001 - a course without the kit's exercises still grades
        registry, params = {}, None
    return {name: ExerciseView(registry.get(name), params) for name in notebooks}
