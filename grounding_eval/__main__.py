"""``python -m grounding_eval``: the same command line as ``grounding-eval``."""

import sys

from grounding_eval.cli import main

sys.exit(main())
