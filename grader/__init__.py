"""The course's instructor tools: release student notebooks, and grade submissions."""

import sys

# nbformat imports jsonschema, which on import compiles some forty grammars of
# rfc3987_syntax (installed with jupyter's jsonschema[format-nongpl]) to check "iri"
# formats: over a second of CPU in every grader process, Dask worker and self-check. No
# notebook schema uses those formats and nbformat validates without format checks, so
# the grader's processes go without the module (jsonschema skips those formats when it is
# missing). A process that imported it before the grader keeps it.
sys.modules.setdefault("rfc3987_syntax", None)
