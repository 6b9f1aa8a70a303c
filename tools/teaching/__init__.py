"""The book's teaching tool: release and grade the nbgrader assignments.

One module per job; ``tools/assignments.py`` is the command line over them.

- ``sources``: the instructor notebooks (points, titles, secrets) and the
  scan of a built book for instructor material;
- ``course``: a temporary nbgrader course, and the feedback preprocessors;
- ``release``: the student versions (optionally a class-specific variant);
- ``grade``: a class's submissions, one grading process each;
- ``sandbox``: the bubblewrap sandbox of each student's kernel;
- ``session``: one submission, its cells in the kernel, its tests here;
- ``wire``: the plain data between the kernel and the checks;
- ``report``, ``feedback``, ``labels``: the grades CSV, the feedback pages,
  their words in Chinese;
- ``flags``: hints on what in a submission a teacher should look at;
- ``matching``, ``marks``, ``variants``: messy folders, written marks,
  class-specific variants.
"""
