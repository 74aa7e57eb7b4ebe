"""The instructor side of the course: everything that runs around nbgrader, not in a lesson.

One module per verb of the instructor: ``release`` regenerates notebooks/ from solutions/
without overwriting edited work, ``selfcheck`` runs a notebook and reports every visible
check, ``collect`` files an LMS download, ``grade`` autogrades the class, ``key`` prints every
student's numbers and answers, ``feedback``, ``export`` and ``report`` hand the results back.
The grading engine they drive (walls, kernels, running, judging) is the sub-package
``engine``; ``plugins`` holds the nbgrader preprocessors that ``nbgrader_config.py`` names,
and ``integrity`` is the static scan of submissions. ``python -m decompkit.course <command>``
runs them from the shell.

These modules may import everything else in decompkit and any notebook machinery. Nothing
in the package imports them except ``kit.py`` (through ``python -m``), ``nbgrader_config.py``
(the plugins) and a grading kernel's read-out, which imports ``course.engine.codec`` only:
this file imports nothing, so that read-out stays light.
"""
