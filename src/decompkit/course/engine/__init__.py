"""The grading engine: what runs a submission and judges it, behind walls.

``sandbox`` builds each kernel's walls, ``forkserver`` and ``kernels`` start kernels fast from
a warm process, ``notebooks`` reads the instructor's notebooks and makes a submission ready,
``runner`` runs one notebook within its bounds and reads its answers out, ``codec`` carries
answers out of the kernel as plain data, ``clean_check`` and ``scoring`` judge them in the
grader's process, ``kitfiles`` watches the kit's own files, ``environment`` is what a kernel
gets of the grader's environment, and ``workers`` grades students one after another or in
parallel. The instructor's verbs (``grade``, ``feedback``, ...) sit one level up and call it.

A grading kernel imports ``codec`` from here: this file imports nothing, so that stays light.
"""
