"""Code that runs inside a student's sandbox: the trusted init, the student server and
the wire format both sides speak. Nothing here is secret: the grader copies this folder,
read-only, into every sandbox."""
