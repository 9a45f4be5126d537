"""``python -m app.cli``: the ``secondbrain`` command."""

import sys

from app.cli.parser import main

sys.exit(main())
