"""The instructor side of the course: everything that runs around nbgrader, not in a lesson.

``release`` regenerates notebooks/ from solutions/ without overwriting edited work,
``selfcheck`` runs a notebook and reports every visible check, ``grade`` autogrades each
student in a scratch copy of the course, ``key`` prints every student's numbers and answers,
``clean_check`` judges the answers read out of a kernel with the instructor's hidden tests,
``codec`` turns an answer into plain data in the student's kernel and back in the grader,
``plugins`` holds the nbgrader preprocessors that ``nbgrader_config.py`` names, and
``integrity`` is the static scan of submissions. ``python -m decompkit.course <command>``
runs release, check, grade, key and integrity from the shell.

These modules may import everything else in decompkit and any notebook machinery. Nothing
in the package imports them except ``kit.py`` (through ``python -m``), ``nbgrader_config.py``
(the plugins) and a grading kernel's read-out, which imports ``course.codec`` only: this file
imports nothing, so that read-out stays light.
"""
