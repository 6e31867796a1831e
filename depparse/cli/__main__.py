"""``python -m depparse.cli``."""

import sys

from . import main

sys.exit(main())
