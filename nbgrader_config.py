"""nbgrader settings for the decompkit course (read by every nbgrader command run here)."""

c = get_config()  # noqa: F821 - injected by nbgrader/traitlets when this file is loaded

c.CourseDirectory.course_id = "decomp"
c.CourseDirectory.root = "."
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"

# An unanswered exercise is left as `name = None`; the stub adds no `raise`, so a fresh
# notebook still runs from top to bottom (its visible checks say "not answered yet").
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# A student cell that loops forever is interrupted after this many seconds.
c.Execute.timeout = 30
