"""nbgrader settings for the decompkit course (read by every nbgrader command run here)."""

import os

c = get_config()  # noqa: F821 - injected by nbgrader/traitlets when this file is loaded

c.CourseDirectory.course_id = "decomp"
# The course is this file's folder, as an absolute path: given ".", nbgrader warns at every
# command that the root is not absolute (traitlets sets __file__ when it loads this file).
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"

# An unanswered exercise is left as `name = None`; the stub adds no `raise`, so a fresh
# notebook still runs from top to bottom (its visible checks say "not answered yet").
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# A student cell that loops forever is interrupted after this many seconds.
c.Execute.timeout = 30
# ... and a notebook, a student may run this long in all (kit.py grade applies both; nbgrader's
# own autograde the notebook's): many cells that each stay under the cell limit still stop.
c.GradingLimits.notebook_time_limit = 180
c.GradingLimits.student_time_limit = 600
# Each kernel `kit.py grade` starts runs inside walls of its own (Linux namespaces: it sees no
# other kernel, no course folder, no network, the kit read-only) and within these bounds; a
# notebook that reaches one is flagged in its grading record.
c.GradingLimits.kernel_memory_mb = 2048  # address space of each of its processes
c.GradingLimits.kernel_processes = 64  # processes and threads
c.GradingLimits.kernel_scratch_mb = 256  # files it writes (home, /tmp), held in memory
# Every cell has run by the time a kernel is shut down: no need to wait for a clean exit.
c.Execute.shutdown_kernel = "immediate"

# Exploration cells (sliders, live figures) carry the tag "explore": autograding skips them,
# so a widget can neither stall nor break grading. They define nothing later cells need.
c.Execute.skip_cells_with_tag = "explore"

# zip_collect: an LMS download unpacked into downloaded/decomp/extracted/ holds files named
# <student>_<notebook>.ipynb, possibly inside folders. Notebook names hold no underscore, so
# the id ends at the last one (ids may contain underscores); names starting with a dot
# (macOS's ._ copies) are not submissions.
c.FileNameCollectorPlugin.named_regexp = (
    r"(?:.*/)?(?P<student_id>[^/.][^/]*)_(?P<file_id>[^/_]+\.ipynb)$"
)

# Autograding steps: nbgrader's own (its Execute starting each kernel with DECOMPKIT_STUDENT set
# to the submission's folder name, so hidden tests draw that student's numbers), plus a byte
# limit on stored output, and every stderr stream dropped before scoring. nbgrader scores a
# test cell 0 when it wrote to stderr, so a library warning during a test would cost a correct
# answer its points; an exception still shows as an error output and still scores 0.
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"[\s\S]"
c.CapOutputBytes.max_bytes = 100_000
c.Autograde.autograde_preprocessors = [
    "decompkit.course.plugins.ExecuteAsStudent",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "decompkit.course.plugins.CapOutputBytes",
    "decompkit.course.plugins.CleanCheck",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
    # Last, once everything is scored: the stored notebook opens in formgrader (the
    # instructor's origin) and in feedback pages, so no markup or output that could run
    # script is kept (decompkit.course.sanitize; the kit's grader does the same).
    "decompkit.course.plugins.Sanitize",
]

# Feedback (decompkit.course.feedback): per graded item the student's answer, score and hint,
# in place of the test cell (no hidden tests, no traceback); no script in a page (its
# Content-Security-Policy forbids it), the maths typeset as MathML when the page is built.
# Pages are always rewritten, so a regrade or a manual grade in formgrader shows up without
# --force.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "decompkit.course.feedback.FeedbackView",
]
c.GenerateFeedback.exporter_class = "decompkit.course.feedback.FeedbackExporter"
c.GenerateFeedback.force = True
