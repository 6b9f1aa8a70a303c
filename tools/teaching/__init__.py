"""The book's teaching tool: release and grade the nbgrader assignments.

One module per job; ``tools/assignments.py`` is the command line over them.

- ``sources``: the instructor notebooks (points, titles, secrets) and the
  scan of a built book for instructor material;
- ``course``: a temporary nbgrader course, and the feedback preprocessors;
- ``release``: the student versions (optionally a class-specific variant);
- ``isolation``: the grading folder and the kernel that runs the students'
  code, away from the repository;
- ``grade``: the grading workers, record in the kernel, re-check apart;
- ``report``: the grades CSV and the feedback pages;
- ``checker``, ``kernel_guard``: record and replay, the kernel's guard;
- ``flags``: what in a submission a teacher should look at;
- ``matching``, ``marks``, ``variants``: messy folders, written marks,
  class-specific variants.
"""
