"""Tools for developing and testing secondbrain; not part of the installed package.

The tests (``tests/``) and the benchmarks (``bench/``) both import from here, never from each
other: stand-ins for services a developer machine lacks (an S3 server, llama.cpp's
OpenAI-compatible server, a Qdrant REST server over the in-process engine), a launcher for real
``secondbrain`` processes, generators of sample files (``gen_*``), and the temporal parser's gold
suite.  They run from a source checkout (the repository root on ``sys.path``: pytest's
``pythonpath``, the bench scripts' own ``sys.path`` line, or ``python -m devtools.<module>``
from the root).
"""
