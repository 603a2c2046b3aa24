"""A class run: grading many notebooks at once. It finds what to grade under a folder,
hands every notebook to the judge as one Dask task (on local worker processes or an
existing cluster), trains the learning checks' baselines once for all of them, keeps each
result on disk as it comes so a run survives a crash, shows its progress, and holds the
class to its share of a busy machine. Nothing here decides a grade: that is the judge's.

- ``submissions``: what to grade under a path: a notebook, a student's folder, a class.
- ``grade_class``: grade a class on Dask, every notebook one task.
- ``dask_cluster``: the cluster a class is graded on (local, or ``--scheduler``).
- ``result_store``: results on disk the moment each notebook is graded (``--out DIR``).
- ``baselines``: the learning checks' baselines, trained once and handed to every worker.
- ``class_progress``: what an instructor sees while a class is graded.
- ``class_cpu_share``: the class's cgroup and CPU weight on a busy machine.
"""
